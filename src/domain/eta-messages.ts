/**
 * Why a tracker has no ETA for a task (contract §17): four reasons, each a sentence for the
 * person waiting, in the 12 locales of public pages, written as a native speaker would say it
 * rather than word for word.
 */
import type { Locale } from "./locales";

export const ETA_REASONS = ["not_assigned", "no_location", "finished", "outside_window"] as const;
export type EtaReason = (typeof ETA_REASONS)[number];

export const PREDICTED_DELIVERY_ERRORS: Record<Locale, Record<EtaReason, string>> = {
  en: {
    not_assigned: "No driver has been assigned yet, so we can't estimate the arrival time.",
    no_location: "We don't know where the driver is right now, so we can't estimate the arrival time.",
    finished: "This visit is already over.",
    outside_window: "The driver is running late and may not make it within the agreed time window.",
  },
  fi: {
    not_assigned: "Kuljettajaa ei ole vielä määrätty, joten saapumisaikaa ei voi vielä arvioida.",
    no_location: "Kuljettajan sijaintia ei tiedetä juuri nyt, joten saapumisaikaa ei voi arvioida.",
    finished: "Tämä käynti on jo päättynyt.",
    outside_window: "Kuljettaja on myöhässä eikä välttämättä ehdi sovitun aikaikkunan sisällä.",
  },
  sv: {
    not_assigned: "Ingen förare har tilldelats ännu, så vi kan inte beräkna ankomsttiden.",
    no_location: "Vi vet inte var föraren befinner sig just nu, så vi kan inte beräkna ankomsttiden.",
    finished: "Det här besöket är redan avslutat.",
    outside_window: "Föraren är försenad och hinner kanske inte fram inom den avtalade tiden.",
  },
  et: {
    not_assigned: "Juhti pole veel määratud, seega ei saa me saabumisaega hinnata.",
    no_location: "Me ei tea praegu, kus juht asub, seega ei saa me saabumisaega hinnata.",
    finished: "See külastus on juba lõppenud.",
    outside_window: "Juht hilineb ega pruugi kokkulepitud ajavahemiku jooksul kohale jõuda.",
  },
  de: {
    not_assigned:
      "Es wurde noch kein Fahrer zugewiesen, daher können wir die Ankunftszeit noch nicht schätzen.",
    no_location:
      "Wir wissen gerade nicht, wo sich der Fahrer befindet, daher können wir die Ankunftszeit nicht schätzen.",
    finished: "Dieser Termin ist bereits abgeschlossen.",
    outside_window:
      "Der Fahrer verspätet sich und schafft es möglicherweise nicht im vereinbarten Zeitfenster.",
  },
  fr: {
    not_assigned: "Aucun livreur n'a encore été désigné : nous ne pouvons pas estimer l'heure d'arrivée.",
    no_location:
      "Nous ne savons pas où se trouve le livreur pour le moment : impossible d'estimer l'heure d'arrivée.",
    finished: "Ce passage est déjà terminé.",
    outside_window: "Le livreur a du retard et risque de ne pas arriver dans le créneau convenu.",
  },
  es: {
    not_assigned: "Todavía no se ha asignado un repartidor, así que no podemos estimar la hora de llegada.",
    no_location:
      "Ahora mismo no sabemos dónde está el repartidor, así que no podemos estimar la hora de llegada.",
    finished: "Esta visita ya ha terminado.",
    outside_window:
      "El repartidor va con retraso y puede que no llegue dentro de la franja horaria acordada.",
  },
  it: {
    not_assigned: "Non è ancora stato assegnato un autista, quindi non possiamo stimare l'orario di arrivo.",
    no_location:
      "Al momento non sappiamo dove si trovi l'autista, quindi non possiamo stimare l'orario di arrivo.",
    finished: "Questa visita è già conclusa.",
    outside_window: "L'autista è in ritardo e potrebbe non arrivare entro la fascia oraria concordata.",
  },
  pl: {
    not_assigned: "Nie przydzielono jeszcze kierowcy, więc nie możemy oszacować godziny przyjazdu.",
    no_location: "Nie wiemy w tej chwili, gdzie jest kierowca, więc nie możemy oszacować godziny przyjazdu.",
    finished: "Ta wizyta już się zakończyła.",
    outside_window: "Kierowca ma opóźnienie i może nie zdążyć w uzgodnionym przedziale czasowym.",
  },
  lt: {
    not_assigned: "Vairuotojas dar nepaskirtas, todėl negalime įvertinti atvykimo laiko.",
    no_location: "Šiuo metu nežinome, kur yra vairuotojas, todėl negalime įvertinti atvykimo laiko.",
    finished: "Šis vizitas jau baigtas.",
    outside_window: "Vairuotojas vėluoja ir gali neatvykti per sutartą laiką.",
  },
  lv: {
    not_assigned: "Vadītājs vēl nav norīkots, tāpēc nevaram aprēķināt ierašanās laiku.",
    no_location: "Pašlaik nezinām, kur atrodas vadītājs, tāpēc nevaram aprēķināt ierašanās laiku.",
    finished: "Šis apmeklējums jau ir noslēdzies.",
    outside_window: "Vadītājs kavējas un var neierasties norunātajā laika logā.",
  },
  ru: {
    not_assigned: "Водитель ещё не назначен, поэтому мы пока не можем рассчитать время прибытия.",
    no_location: "Мы сейчас не знаем, где находится водитель, поэтому не можем рассчитать время прибытия.",
    finished: "Этот визит уже завершён.",
    outside_window: "Водитель задерживается и может не успеть в согласованный интервал.",
  },
};
