/**
 * The words of the recipients' tracking page (contract §17), in the 12 locales of public pages,
 * in the reader's language as negotiated from Accept-Language: the same words a delivery
 * company's own page would use in that language, and the same word for the driver as the
 * ETA sentences of eta-messages.ts.
 */
import type { Locale } from "./locales";
import type { TaskState } from "./task-state-machine";

/** The task states as the recipient reads them: `accepted` reads as `assigned`. */
export type PageState = Exclude<TaskState, "accepted">;

export type TrackerLabels = {
  title: string;
  window: string;
  eta: string;
  driver: string;
  reference: string;
  map: string;
  empty: string;
  states: Record<PageState, string>;
};

export const TRACKER_LABELS: Record<Locale, TrackerLabels> = {
  en: {
    title: "Delivery tracking",
    window: "Time window",
    eta: "Estimated arrival",
    driver: "Driver",
    reference: "Reference",
    map: "Open the map",
    empty: "Nothing to show.",
    states: {
      draft: "Planned",
      scheduled: "Scheduled",
      unassigned: "Waiting for a driver",
      assigned: "Driver assigned",
      transit: "On the way",
      active: "At your door",
      completed: "Done",
      failed: "Could not be completed",
      cancelled: "Cancelled",
    },
  },
  fi: {
    title: "Toimituksen seuranta",
    window: "Aikaikkuna",
    eta: "Arvioitu saapumisaika",
    driver: "Kuljettaja",
    reference: "Viite",
    map: "Avaa kartta",
    empty: "Ei näytettävää.",
    states: {
      draft: "Suunnitteilla",
      scheduled: "Aikataulutettu",
      unassigned: "Odottaa kuljettajaa",
      assigned: "Kuljettaja määrätty",
      transit: "Matkalla",
      active: "Kuljettaja on perillä",
      completed: "Valmis",
      failed: "Ei onnistunut",
      cancelled: "Peruttu",
    },
  },
  sv: {
    title: "Spåra leveransen",
    window: "Tidsfönster",
    eta: "Beräknad ankomst",
    driver: "Förare",
    reference: "Referens",
    map: "Öppna kartan",
    empty: "Inget att visa.",
    states: {
      draft: "Planerad",
      scheduled: "Schemalagd",
      unassigned: "Väntar på förare",
      assigned: "Förare tilldelad",
      transit: "På väg",
      active: "Föraren är framme",
      completed: "Klar",
      failed: "Kunde inte genomföras",
      cancelled: "Inställd",
    },
  },
  et: {
    title: "Tarne jälgimine",
    window: "Ajavahemik",
    eta: "Eeldatav saabumisaeg",
    driver: "Juht",
    reference: "Viide",
    map: "Ava kaart",
    empty: "Pole midagi näidata.",
    states: {
      draft: "Planeerimisel",
      scheduled: "Ajastatud",
      unassigned: "Ootab juhti",
      assigned: "Juht määratud",
      transit: "Teel",
      active: "Juht on kohal",
      completed: "Tehtud",
      failed: "Ei õnnestunud",
      cancelled: "Tühistatud",
    },
  },
  de: {
    title: "Sendungsverfolgung",
    window: "Zeitfenster",
    eta: "Voraussichtliche Ankunft",
    driver: "Fahrer",
    reference: "Referenz",
    map: "Karte öffnen",
    empty: "Nichts anzuzeigen.",
    states: {
      draft: "In Planung",
      scheduled: "Eingeplant",
      unassigned: "Wartet auf einen Fahrer",
      assigned: "Fahrer zugewiesen",
      transit: "Unterwegs",
      active: "Der Fahrer ist da",
      completed: "Erledigt",
      failed: "Konnte nicht erledigt werden",
      cancelled: "Storniert",
    },
  },
  fr: {
    title: "Suivi de livraison",
    window: "Créneau",
    eta: "Arrivée estimée",
    driver: "Livreur",
    reference: "Référence",
    map: "Ouvrir la carte",
    empty: "Rien à afficher.",
    states: {
      draft: "En préparation",
      scheduled: "Planifié",
      unassigned: "En attente d'un livreur",
      assigned: "Livreur désigné",
      transit: "En route",
      active: "Le livreur est arrivé",
      completed: "Terminé",
      failed: "N'a pas pu être effectué",
      cancelled: "Annulé",
    },
  },
  es: {
    title: "Seguimiento del envío",
    window: "Franja horaria",
    eta: "Llegada estimada",
    driver: "Repartidor",
    reference: "Referencia",
    map: "Abrir el mapa",
    empty: "No hay nada que mostrar.",
    states: {
      draft: "En planificación",
      scheduled: "Programado",
      unassigned: "Esperando repartidor",
      assigned: "Repartidor asignado",
      transit: "En camino",
      active: "El repartidor ha llegado",
      completed: "Completado",
      failed: "No se pudo completar",
      cancelled: "Cancelado",
    },
  },
  it: {
    title: "Tracciamento della consegna",
    window: "Fascia oraria",
    eta: "Arrivo previsto",
    driver: "Autista",
    reference: "Riferimento",
    map: "Apri la mappa",
    empty: "Niente da mostrare.",
    states: {
      draft: "In pianificazione",
      scheduled: "Programmato",
      unassigned: "In attesa di un autista",
      assigned: "Autista assegnato",
      transit: "In viaggio",
      active: "L'autista è arrivato",
      completed: "Completato",
      failed: "Non è stato possibile completarlo",
      cancelled: "Annullato",
    },
  },
  pl: {
    title: "Śledzenie dostawy",
    window: "Przedział czasowy",
    eta: "Przewidywany przyjazd",
    driver: "Kierowca",
    reference: "Numer referencyjny",
    map: "Otwórz mapę",
    empty: "Nic do wyświetlenia.",
    states: {
      draft: "Planowane",
      scheduled: "Zaplanowane",
      unassigned: "Czeka na kierowcę",
      assigned: "Kierowca przydzielony",
      transit: "W drodze",
      active: "Kierowca jest na miejscu",
      completed: "Zakończone",
      failed: "Nie udało się zrealizować",
      cancelled: "Anulowane",
    },
  },
  lt: {
    title: "Siuntos sekimas",
    window: "Laiko intervalas",
    eta: "Numatomas atvykimo laikas",
    driver: "Vairuotojas",
    reference: "Užsakymo numeris",
    map: "Atidaryti žemėlapį",
    empty: "Nėra ką rodyti.",
    states: {
      draft: "Planuojama",
      scheduled: "Suplanuota",
      unassigned: "Laukiama vairuotojo",
      assigned: "Vairuotojas paskirtas",
      transit: "Pakeliui",
      active: "Vairuotojas atvyko",
      completed: "Atlikta",
      failed: "Nepavyko atlikti",
      cancelled: "Atšaukta",
    },
  },
  lv: {
    title: "Piegādes izsekošana",
    window: "Laika logs",
    eta: "Paredzamais ierašanās laiks",
    driver: "Vadītājs",
    reference: "Pasūtījuma numurs",
    map: "Atvērt karti",
    empty: "Nav ko rādīt.",
    states: {
      draft: "Tiek plānots",
      scheduled: "Ieplānots",
      unassigned: "Gaida vadītāju",
      assigned: "Vadītājs norīkots",
      transit: "Ceļā",
      active: "Vadītājs ir klāt",
      completed: "Izpildīts",
      failed: "Neizdevās izpildīt",
      cancelled: "Atcelts",
    },
  },
  ru: {
    title: "Отслеживание доставки",
    window: "Интервал",
    eta: "Ожидаемое время прибытия",
    driver: "Водитель",
    reference: "Номер заказа",
    map: "Открыть карту",
    empty: "Пока нечего показать.",
    states: {
      draft: "Планируется",
      scheduled: "Запланировано",
      unassigned: "Ожидает водителя",
      assigned: "Водитель назначен",
      transit: "В пути",
      active: "Водитель на месте",
      completed: "Выполнено",
      failed: "Не удалось выполнить",
      cancelled: "Отменено",
    },
  },
};

/** The page's word for a task state (`accepted` reads as `assigned` to the recipient). */
export function stateLabel(labels: TrackerLabels, state: string): string {
  const key = (state === "accepted" ? "assigned" : state) as PageState;
  return labels.states[key] ?? state;
}
