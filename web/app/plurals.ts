import type { PluralForms } from "../shared/plural";

/**
 * The field app's counts in words (issue 53): for the messages with `{n}`, the forms of the
 * plural categories each language has (web/shared/plural.ts) beside its catalog's text, which is
 * the `other` form (web/app/strings.ts). A language whose sentence does not change with the count
 * ("Laukia: {n}") has none here. test/web/plural.test.ts checks them.
 */
export type FieldPluralKey = "status.waiting" | "signout.waiting" | "discarded";

export const FIELD_PLURALS: Record<string, Partial<Record<FieldPluralKey, Omit<PluralForms, "other">>>> = {
  en: {
    "signout.waiting": { one: "{n} action is still waiting. Go online to send it before signing out." },
    discarded: {
      one: "{n} action you made on this phone was not sent within {days} days and was discarded.",
    },
  },
  de: {
    "signout.waiting": {
      one: "{n} Aktion wartet noch. Gehen Sie online, um sie vor dem Abmelden zu senden.",
    },
    discarded: {
      one: "{n} Aktion, die Sie auf diesem Telefon erfasst haben, wurde nicht innerhalb von {days} Tagen gesendet und verworfen.",
    },
  },
  es: {
    "status.waiting": { one: "{n} pendiente" },
    "signout.waiting": {
      one: "Queda {n} acción por enviar. Conéctese para enviarla antes de cerrar sesión.",
    },
    discarded: { one: "{n} acción que registró en este teléfono no se envió en {days} días y se descartó." },
  },
  et: {
    "signout.waiting": { one: "{n} toiming ootab veel. Mine võrku, et see enne väljalogimist saata." },
    discarded: {
      one: "{n} toiming, mille selles telefonis tegid, jäi {days} päeva jooksul saatmata ja kustutati.",
    },
  },
  fi: {
    "signout.waiting": {
      one: "{n} toiminto odottaa vielä. Mene verkkoon lähettääksesi sen ennen uloskirjautumista.",
    },
    discarded: {
      one: "{n} tällä puhelimella tekemäsi toiminto jäi lähettämättä {days} päivän kuluessa, ja se hylättiin.",
    },
  },
  fr: {
    "signout.waiting": {
      one: "{n} action est encore en attente. Connectez-vous au réseau pour l'envoyer avant de vous déconnecter.",
    },
    discarded: {
      one: "{n} action faite sur ce téléphone n'a pas été envoyée en {days} jours et a été supprimée.",
    },
  },
  it: {
    "signout.waiting": { one: "{n} azione è ancora in attesa. Vai online per inviarla prima di uscire." },
    discarded: {
      one: "{n} azione registrata su questo telefono non è stata inviata entro {days} giorni ed è stata scartata.",
    },
  },
  lt: {
    "signout.waiting": {
      one: "Dar laukia {n} veiksmas. Prisijunkite prie tinklo, kad jį išsiųstumėte prieš atsijungdami.",
      few: "Dar laukia {n} veiksmai. Prisijunkite prie tinklo, kad juos išsiųstumėte prieš atsijungdami.",
      many: "Dar laukia {n} veiksmo. Prisijunkite prie tinklo, kad jį išsiųstumėte prieš atsijungdami.",
    },
    discarded: {
      one: "{n} veiksmas, atliktas šiame telefone, nebuvo išsiųstas per {days} d. ir buvo atmestas.",
      few: "{n} veiksmai, atlikti šiame telefone, nebuvo išsiųsti per {days} d. ir buvo atmesti.",
    },
  },
  lv: {
    "signout.waiting": {
      one: "Vēl gaida {n} darbība. Pieslēdzieties tīklam, lai to nosūtītu pirms izrakstīšanās.",
      zero: "Vēl gaida {n} darbību. Pieslēdzieties tīklam, lai tās nosūtītu pirms izrakstīšanās.",
    },
    discarded: {
      one: "{n} darbība, ko veicāt šajā tālrunī, netika nosūtīta {days} dienu laikā un tika atmesta.",
    },
  },
  pl: {
    "signout.waiting": {
      one: "Czeka jeszcze {n} działanie. Połącz się z siecią, aby je wysłać przed wylogowaniem.",
      few: "Czekają jeszcze {n} działania. Połącz się z siecią, aby je wysłać przed wylogowaniem.",
    },
    discarded: {
      one: "{n} działanie wykonane na tym telefonie nie zostało wysłane w ciągu {days} dni i zostało odrzucone.",
      few: "{n} działania wykonane na tym telefonie nie zostały wysłane w ciągu {days} dni i zostały odrzucone.",
    },
  },
  ru: {
    discarded: {
      one: "{n} действие, сделанное на этом телефоне, не было отправлено за {days} дн. и было удалено.",
      few: "{n} действия, сделанные на этом телефоне, не были отправлены за {days} дн. и были удалены.",
    },
  },
  sv: {
    "signout.waiting": { one: "{n} åtgärd väntar fortfarande. Gå online och skicka den innan du loggar ut." },
    discarded: {
      one: "{n} åtgärd du gjorde på den här telefonen skickades inte inom {days} dagar och har kasserats.",
    },
  },
};
