import { useRef } from "preact/hooks";
import { wallOf, wallToInstant } from "../shared/format";
import { tf } from "./locales";
import type { FormFill, Upload } from "./outbox";
import { type Pad, padImage, SignaturePad } from "./signature";

/** A form field as `/form_fields/` lists it to a worker (contract §15: the visible ones only). */
export type FormField = {
  key: string;
  label: string;
  field_type: string;
  choices: string[];
  default: unknown;
  required: boolean;
  position: number;
};
export type FormDef = { url: string; id: string; name: string; description: string; fields: FormField[] };
/** A form the task asks for before "Complete", with the values it starts from. */
export type PendingForm = { form: FormDef; data: Record<string, unknown> };

const nameOf = (i: number, key: string) => `form${i}-${key}`;
const text = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/**
 * The task's forms as fieldsets of the "Complete" dialog, one input per field a worker sees, of
 * the field's type (contract §15). Sections are headings; every section is shown open (a phone
 * scrolls one column; `collapsed` is a hint for wider screens). `pads` receives the signature
 * fields' canvases.
 */
export function TaskForms(props: {
  forms: PendingForm[];
  zone: string;
  pads: { current: Record<string, Pad> };
}) {
  return (
    <>
      {props.forms.map((p, i) => (
        <fieldset key={p.form.url} class="form">
          <legend>{p.form.name}</legend>
          {p.form.description && <p class="hint">{p.form.description}</p>}
          {p.form.fields.map((f) => (
            <FieldInput key={f.key} field={f} name={nameOf(i, f.key)} value={p.data[f.key]} {...props} />
          ))}
        </fieldset>
      ))}
    </>
  );
}

function FieldInput(props: {
  field: FormField;
  name: string;
  value: unknown;
  zone: string;
  pads: { current: Record<string, Pad> };
}) {
  const { field: f, name, value } = props;
  const pad = useRef<Pad>({ canvas: null, drawn: false });
  props.pads.current[name] = pad.current;
  const required = f.required;
  switch (f.field_type) {
    case "section":
      return <h3 class="section">{f.label}</h3>;
    case "boolean":
      return (
        <label class="check">
          <input type="checkbox" name={name} defaultChecked={value === true} /> {f.label}
        </label>
      );
    case "multiselect": {
      const chosen = Array.isArray(value) ? value : [];
      return (
        <fieldset class="choices">
          <legend>{f.label}</legend>
          {f.choices.map((c) => (
            <label key={c} class="check">
              <input type="checkbox" name={name} value={c} defaultChecked={chosen.includes(c)} /> {c}
            </label>
          ))}
        </fieldset>
      );
    }
    case "signature":
      return (
        <div class="field">
          <SignaturePad pad={pad} label={f.label} clearLabel={tf("form.clear", { label: f.label })} />
        </div>
      );
  }
  return (
    <div class="field">
      <label htmlFor={name}>{f.label}</label>
      {f.field_type === "textarea" ? (
        <textarea id={name} name={name} required={required} defaultValue={text(value)} rows={3} />
      ) : f.field_type === "select" ? (
        // Preact has no `defaultValue` for a select: the chosen option is `selected`.
        <select id={name} name={name} required={required}>
          <option value="">—</option>
          {f.choices.map((c) => (
            <option key={c} value={c} selected={c === value}>
              {c}
            </option>
          ))}
        </select>
      ) : f.field_type === "photo" ? (
        <input
          id={name}
          name={name}
          type="file"
          accept="image/*"
          capture="environment"
          required={required && !value}
        />
      ) : (
        <TypedInput name={name} required={required} {...inputOf(f.field_type, value, props.zone)} />
      )}
    </div>
  );
}

function TypedInput(p: {
  name: string;
  required: boolean;
  type: string;
  step?: string;
  defaultValue: string;
}) {
  return (
    <input
      id={p.name}
      name={p.name}
      required={p.required}
      type={p.type as "text"}
      step={p.step}
      defaultValue={p.defaultValue}
    />
  );
}

/** The `<input>` of a field type, and its starting value in the form the input takes. */
function inputOf(
  type: string,
  value: unknown,
  zone: string,
): { type: string; step?: string; defaultValue: string } {
  switch (type) {
    case "number":
      return { type: "number", step: "any", defaultValue: text(value) };
    case "date":
      return { type: "date", defaultValue: text(value) };
    case "time":
      return { type: "time", defaultValue: text(value).slice(0, 5) };
    case "datetime":
      return { type: "datetime-local", defaultValue: typeof value === "string" ? wallOf(value, zone) : "" };
    default:
      return { type: "text", defaultValue: text(value) };
  }
}

/**
 * What the dialog's inputs say, as the forms to complete (values typed in), the files their
 * photo and signature fields need uploaded first, and the labels of required fields left empty.
 */
export async function readForms(
  forms: PendingForm[],
  fd: FormData,
  pads: Record<string, Pad>,
  zone: string,
): Promise<{ fills: FormFill[]; uploads: Upload[]; missing: string[] }> {
  const fills: FormFill[] = [];
  const uploads: Upload[] = [];
  const missing: string[] = [];
  for (const [i, p] of forms.entries()) {
    const data: Record<string, unknown> = {};
    for (const f of p.form.fields) {
      if (f.field_type === "section") continue;
      const name = nameOf(i, f.key);
      const raw = fd.get(name);
      const s = typeof raw === "string" ? raw.trim() : "";
      let file: Upload | null = null;
      let v: unknown = s === "" ? null : s;
      if (f.field_type === "number") v = s === "" ? null : Number(s);
      else if (f.field_type === "boolean") v = raw === "on";
      else if (f.field_type === "multiselect") v = fd.getAll(name).map(String);
      else if (f.field_type === "datetime")
        v = s ? new Date(wallToInstant(s.slice(0, 10), s.slice(11, 16), zone)).toISOString() : null;
      else if (f.field_type === "photo") {
        v = p.data[f.key] ?? null;
        if (raw instanceof File && raw.size > 0)
          file = {
            kind: "photo",
            blob: raw,
            fileName: raw.name || "photo.jpg",
            type: raw.type || "image/jpeg",
          };
      } else if (f.field_type === "signature") {
        v = p.data[f.key] ?? null;
        const blob = await padImage(pads[name]);
        if (blob) file = { kind: "signature", blob, fileName: "signature.png", type: "image/png" };
      }
      if (file) uploads.push({ ...file, field: { form: p.form.url, key: f.key } });
      const empty = v === null || (Array.isArray(v) && v.length === 0);
      if (f.required && empty && !file) missing.push(f.label);
      data[f.key] = v;
    }
    fills.push({ form: p.form.url, data });
  }
  return { fills, uploads, missing };
}
