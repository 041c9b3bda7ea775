/**
 * Examples of the OpenAPI document.
 *
 * Requests (below, by operationId) are written for a reader who tries them on a new account in
 * document order: each one refers only to objects that earlier examples made (the account,
 * the worker, the `door_code` metafield, the task, ...), named by the fake ids of
 * `EXAMPLE_IDS`. test/openapi/walk.test.ts sends every one of them in that order on a fresh
 * account, each id replaced by the id of the object its example made, and expects the
 * documented success status.
 *
 * Answers are recorded, not written: the same walk records what the service answered into
 * openapi-examples.generated.json, with its ids, host, times and secrets replaced by the stable
 * fake values of this file (`npm run openapi:examples` records them again; CI fails when the
 * service's answers no longer match the file).
 */
import generated from "./openapi-examples.generated.json";

/** The host of every example URL. */
export const EXAMPLE_BASE = "https://api.example.com";

/** Fake ids that look like the service's (UUIDv7) and say what they are: `0195a3c0-<n>-7000-8000-...`. */
export const fakeId = (n: number) =>
  `0195a3c0-${n.toString(16).padStart(4, "0")}-7000-8000-${n.toString(16).padStart(12, "0")}`;

/** The objects the examples refer to; the walk maps each to the real object its example made. */
export const EXAMPLE_IDS = {
  account: fakeId(0x01),
  admin: fakeId(0x02),
  worker: fakeId(0x03),
  integration: fakeId(0x04),
  metafield: fakeId(0x05),
  webhook: fakeId(0x06),
  client: fakeId(0x07),
  contactAddress: fakeId(0x08),
  task: fakeId(0x09),
  order: fakeId(0x0a),
  pickUp: fakeId(0x0b),
  dropOff: fakeId(0x0c),
  uploadNote: fakeId(0x0d),
  uploadPhoto: fakeId(0x0e),
  uploadSignature: fakeId(0x0f),
  uploadCsv: fakeId(0x10),
  note: fakeId(0x11),
  photo: fakeId(0x12),
  signature: fakeId(0x13),
  route: fakeId(0x14),
  form: fakeId(0x15),
  bootstrapAccount: fakeId(0x16),
  manager: fakeId(0x17),
} as const;
export type ExampleName = keyof typeof EXAMPLE_IDS;

/** Tokens that arrive by e-mail (the walk reads the real ones from the outbox). */
export const EXAMPLE_TOKENS = {
  activation: "Yk2k3J6z0m8yq8mC2x5bKQ4r1TQ0l8vVwX9s7dE3aFg",
  verifyEmail: "q3Vt0bE9c2k7Zs1mN8xW4yR6pL5aJ0hF2gD9sK3eT1u",
};

const url = (collection: string, name: ExampleName) => `${EXAMPLE_BASE}/${collection}/${EXAMPLE_IDS[name]}/`;
const ACCOUNT = url("accounts", "account");
const WORKER = url("users", "worker");
const TASK = url("tasks", "task");
const FORM = url("forms", "form");

/** Several examples of one body, by summary (OpenAPI `examples`); the walk sends each in turn. */
export class Named {
  constructor(readonly entries: Record<string, unknown>) {}
}
const named = (entries: Record<string, unknown>) => new Named(entries);

/** The examples of one body as `[summary, value]` pairs (one unnamed example: summary ""). */
export const exampleEntries = (example: unknown): [string, unknown][] =>
  example === undefined ? [] : example instanceof Named ? Object.entries(example.entries) : [["", example]];

const ADMIN_CREDENTIALS = { email: "admin@acme.example.com", password: "correct horse battery staple" };
const aino = { name: "Aino Virtanen", phones: ["+358401234567"], emails: ["aino@example.com"] };

/** A task body without its assignee (PUT keeps the assignee; assignment is a command). */
const taskBody = {
  account: ACCOUNT,
  category: "drop_off",
  address: { raw_address: "Kauppakatu 12, Jyväskylä" },
  contact: aino,
  complete_after: "2030-06-03T08:00:00.000Z",
  complete_before: "2030-06-03T12:00:00.000Z",
  description: "Two parcels; ring the bell at the side door.",
  duration: "00:15:00",
  metafields: { door_code: "4711" },
  signers: [{ name: "Aino Virtanen" }],
};

const webhook = {
  url: "https://hooks.example.com/dispatch",
  events: ["task.state_changed", "task_command.rejected"],
  form_response_events: false,
};

const taskExportFields = ["id", "state", "address.formatted_address", "contact.name", "assignee.email"];

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  // Accounts
  bootstrapFirstAdmin: {
    name: "Acme Deliveries",
    email: "ops@acme.example.com",
    password: "correct horse battery staple",
  },
  createAccount: { name: "Acme Deliveries", ...ADMIN_CREDENTIALS },
  partialUpdateAccount: {
    language: "fi",
    timezone: "Europe/Helsinki",
    failed_reasons: ["Not at home", "Refused"],
    feature_signer_name: true,
    optimize_earliest_start: "07:30:00",
    optimize_latest_end: "16:00:00",
  },
  // Users and roles
  createUser: named({
    "A field worker, who gets an activation e-mail": {
      email: "driver@acme.example.com",
      name: "Matti Virtanen",
      role: "worker",
    },
    "An integration, with a password": {
      email: "erp@acme.example.com",
      name: "ERP integration",
      password: "a long integration password",
      role: "integration",
    },
  }),
  partialUpdateUser: { name: "ERP integration (production)" },
  activateUser: { token: EXAMPLE_TOKENS.activation, password: "a long passphrase" },
  confirmVerifyEmailUser: { token: EXAMPLE_TOKENS.verifyEmail },
  createAccountRole: { email: "manager@acme.example.com", role: "manager" },
  partialUpdateAccountRole: named({
    "The worker's vehicle and depots (admins)": {
      vehicle_capacity: [1200, 40],
      start_address: { raw_address: "Vasarakatu 29, Jyväskylä" },
      end_address: null,
    },
    "The worker goes on duty (its own role)": { on_duty: true },
  }),
  // Authentication
  authenticate: { username: ADMIN_CREDENTIALS.email, password: ADMIN_CREDENTIALS.password },
  authorizeSessionToken: { account: ACCOUNT },
  createSessionToken: { name: "ERP integration" },
  // Webhooks
  createWebhook: webhook,
  updateWebhook: { ...webhook, form_response_events: true, state: "active" },
  partialUpdateWebhook: { state: "active" },
  // Metafields, clients, contact addresses
  createMetafield: {
    key: "door_code",
    label: "Door code",
    applies_to: "tasks",
    value_type: "string",
    is_editable_by_worker: false,
  },
  updateMetafield: {
    key: "door_code",
    label: "Door code (entrance)",
    applies_to: "tasks",
    value_type: "string",
    is_editable_by_worker: false,
    hide_when_empty: true,
  },
  partialUpdateMetafield: { is_required_before_complete: true },
  createClient: {
    name: "Kahvila Aalto",
    external_id: "CRM-1042",
    emails: ["orders@aalto.example"],
    phones: ["+358401234567"],
    notes: "Deliveries before 10:00.",
  },
  updateClient: { name: "Kahvila Aalto", external_id: "CRM-1042", emails: ["orders@aalto.example"] },
  partialUpdateClient: { notes: "Deliveries before 11:00." },
  createContactAddress: {
    account: ACCOUNT,
    external_id: "CUST-1042",
    address: { raw_address: "Kauppakatu 12, Jyväskylä" },
    contact: { name: "Aino Virtanen", phones: ["+358401234567"] },
  },
  updateContactAddress: {
    account: ACCOUNT,
    external_id: "CUST-1042",
    address: { raw_address: "Kauppakatu 14, Jyväskylä" },
    contact: { name: "Aino Virtanen" },
  },
  partialUpdateContactAddress: { contact: { name: "Aino Virtanen", notes: "Back door" } },
  // Tasks, orders, commands
  createTask: named({
    "A task for the worker": { ...taskBody, assignee: WORKER },
    "A weekly task: the first occurrence now, the others by the cron": {
      ...taskBody,
      description: "Weekly restock of the coffee machine.",
      recurrence: { rule: "FREQ=WEEKLY;BYDAY=MO", start: "2030-06-03T09:00:00", timezone: "Europe/Helsinki" },
    },
  }),
  updateTask: taskBody,
  partialUpdateTask: { description: "Leave at the reception.", complete_before: "2030-06-03T14:00:00.000Z" },
  createOrder: named({
    "One order, created or updated by its external_id": {
      account: ACCOUNT,
      external_id: "ERP-2030-0042",
      reference: "PO 42",
      description: "Weekly restock",
      orderer: { name: "Kahvila Aalto" },
      auto_assign: true,
      tasks_data: [
        { category: "pick_up", address: { raw_address: "Vapaudenkatu 40, Jyväskylä" } },
        { category: "drop_off", address: { raw_address: "Hallituskatu 3, Äänekoski" } },
      ],
    },
    "A batch of orders, stored all or nothing": [
      {
        account: ACCOUNT,
        external_id: "ERP-2030-0043",
        reference: "PO 43",
        tasks_data: [{ category: "drop_off", address: { raw_address: "Tapionkatu 4, Jyväskylä" } }],
      },
      {
        account: ACCOUNT,
        external_id: "ERP-2030-0044",
        reference: "PO 44",
        tasks_data: [{ category: "service", address: { raw_address: "Hannikaisenkatu 20, Jyväskylä" } }],
      },
    ],
  }),
  partialUpdateOrder: { reference: "PO 42 (revised)" },
  createTaskCommand: named({
    "One command (the assignee accepts)": {
      task: TASK,
      external_id: "phone-7f3a-000123",
      time: "2030-06-03T08:05:00.000Z",
      action: "accept",
    },
    "A batch from a phone that was offline": [
      {
        task: TASK,
        external_id: "phone-7f3a-000124",
        time: "2030-06-03T09:30:00.000Z",
        action: "transit",
        location: { type: "Point", coordinates: [25.7473, 62.2426] },
      },
      {
        task: TASK,
        external_id: "phone-7f3a-000125",
        time: "2030-06-03T09:41:07.000Z",
        action: "complete",
        notes: "Signed by the recipient.",
        location: { type: "Point", coordinates: [25.7482, 62.2418] },
      },
    ],
  }),
  // Auto-assign (contract §29)
  createTaskAutoAssign: named({
    "A day's unassigned tasks, by window start": { day: "2030-06-03" },
    "Some tasks, in this order (one already assigned is answered as it stands)": { tasks: [TASK] },
  }),
  // Positions (contract §28)
  createPositions: named({
    "One position": {
      location: { type: "Point", coordinates: [25.7473, 62.2426] },
      time: "2030-06-03T09:30:00.000Z",
      accuracy_m: 6.5,
      speed_mps: 11.2,
      heading_deg: 184,
    },
    "A batch from a phone back online (any order)": [
      {
        location: { type: "Point", coordinates: [25.7482, 62.2418] },
        time: "2030-06-03T09:30:30.000Z",
        accuracy_m: 8,
        speed_mps: null,
        heading_deg: null,
      },
      {
        location: { type: "Point", coordinates: [25.7478, 62.2422] },
        time: "2030-06-03T09:30:15.000Z",
        accuracy_m: 5,
      },
    ],
  }),
  // Files
  createFileUpload: named({
    "A delivery note (text)": { file_name: "delivery note.txt", file_type: "text/plain" },
    "A photo (PNG)": { file_name: "parcel.png", file_type: "image/png" },
    "A signature (PNG)": { file_name: "signature.png", file_type: "image/png" },
    "A CSV file to import": { file_name: "orders.csv", file_type: "text/csv" },
  }),
  createDocument: named({
    "A delivery note": {
      account: ACCOUNT,
      task: TASK,
      file_upload: url("file_uploads", "uploadNote"),
      description: "Delivery note",
      visible_to_worker: true,
      s3_response_headers: { "Content-Disposition": 'attachment; filename="delivery-note.txt"' },
    },
    "A photo of the parcel": {
      account: ACCOUNT,
      task: TASK,
      file_upload: url("file_uploads", "uploadPhoto"),
      description: "Parcel at the door",
    },
  }),
  partialUpdateDocument: { description: "Parcel at the door (signed for)", visible_to_client: true },
  batchDeleteDocuments: { ids: [url("documents", "note")] },
  createSignature: {
    account: ACCOUNT,
    task: TASK,
    file_upload: url("file_uploads", "uploadSignature"),
    description: "Recipient's signature",
    signer_name: "Aino Virtanen",
  },
  partialUpdateSignature: { visible_to_worker: false },
  batchDeleteSignatures: { ids: [EXAMPLE_IDS.signature] },
  // Routes and their optimization
  createRoute: { name: "North, Monday", assignee: WORKER, date: "2030-06-03", objective: "distance" },
  updateRoute: { name: "North, Monday", assignee: WORKER, date: "2030-06-03", objective: "duration" },
  partialUpdateRoute: { name: "North, Monday (one van)" },
  createRouteOptimization: {
    routes: [url("routes", "route")],
    tasks: [url("tasks", "pickUp"), url("tasks", "dropOff")],
    ignore_time_windows: false,
    objective: null,
    apply: true,
    from_now: false,
    reassign: true,
  },
  // Trackers, SMS, notifications
  createTracker: {
    tasks: [TASK],
    public_task_fields: ["state", "address.formatted_address", "complete_before", "eta", "assignee.name"],
    task_popup_template: "Delivery to {{address.formatted_address}}: {{state}}",
  },
  partialUpdateTracker: { expires_at: "2030-07-01T00:00:00.000Z" },
  createSms: { to: "+358401234567", message: "Your parcel arrives between 11:00 and 15:00.", task: TASK },
  createNotificationTemplate: {
    event: "task_completed",
    channel: "email",
    language: "fi",
    subject: "Toimitettu: {{address.formatted_address}}",
    body: "Hei {{contact.name}}, pakettisi on toimitettu. Toimitustodistus on liitteenä. Seuranta: {{tracker_url}}",
    pod_show_task_events: false,
  },
  updateNotificationTemplate: {
    event: "task_transit",
    channel: "sms",
    body: "{{assignee.name}} is on the way, arriving around {{eta}}: {{tracker_url}}",
  },
  partialUpdateNotificationTemplate: { is_active: false },
  // Forms
  createForm: { name: "Delivery checklist", description: "Before leaving the site." },
  updateForm: { name: "Delivery checklist", description: "Before leaving the site.", is_active: true },
  partialUpdateForm: { description: "Before leaving the site; photograph any damage." },
  createFormField: {
    form: FORM,
    key: "parcel_condition",
    label: "Parcel condition",
    field_type: "select",
    choices: ["intact", "damaged"],
    default: "intact",
    required: true,
    position: 1,
  },
  updateFormField: {
    key: "parcel_condition",
    label: "Condition of the parcel",
    field_type: "select",
    choices: ["intact", "damaged", "missing"],
  },
  partialUpdateFormField: { required: true },
  createFormResponse: { form: FORM, task: TASK, data: { parcel_condition: "damaged" } },
  updateFormResponse: { data: { parcel_condition: "intact" } },
  partialUpdateFormResponse: { data: { parcel_condition: "damaged" } },
  // Recurrences
  createRecurrence: {
    rule: "FREQ=WEEKLY;BYDAY=MO,WE",
    start: "2030-06-03T09:00:00",
    end: null,
    timezone: "Europe/Helsinki",
    assignee: WORKER,
    kind: "task",
    template: taskBody,
  },
  updateRecurrence: {
    rule: "FREQ=WEEKLY;BYDAY=TU",
    start: "2030-06-04T09:00:00",
    kind: "task",
    template: taskBody,
  },
  partialUpdateRecurrence: { rule: "FREQ=WEEKLY;BYDAY=MO,WE,FR" },
  // Exports and imports
  createTaskExport: {
    account: ACCOUNT,
    fields: [...taskExportFields, "metafields.door_code"],
    filters: { state: "completed", metafields: { door_code: "4711" } },
    format: "csv",
  },
  createContactAddressExport: {
    account: ACCOUNT,
    fields: ["external_id", "address.raw_address", "contact.name", "contact.phones"],
    format: "jsonl",
  },
  createImport: { kind: "orders", file: url("file_uploads", "uploadCsv"), dry_run: false },
};

/** The CSV file the import example imports (the walk uploads it as `uploadCsv`). */
export const EXAMPLE_IMPORT_CSV =
  'order.external_id,order.reference,category,address.raw_address\r\nERP-2030-0050,PO 50,drop_off,"Kauppakatu 12, Jyväskylä"\r\n';

type Recorded = Record<string, Record<string, Record<string, Record<string, unknown>>>>;

/**
 * Answers recorded from the service, by operationId, status and media type: `{summary: value}`
 * (openapi-examples.generated.json).
 */
export const RESPONSE_EXAMPLES: Recorded = (generated as { responses: Recorded }).responses;
