/**
 * Examples of the OpenAPI document, by operationId (and status, for answers). Every JSON
 * request body has one (a test checks it); Redocly's `no-invalid-media-type-examples` checks each
 * against its schema. The ids and URLs are made up but have the service's shapes.
 */

const BASE = "https://dispatch.example.com";
const ACCOUNT = `${BASE}/accounts/0193a5d2-7c1e-7b3a-9f00-2b1c5a7d9e01/`;
const TASK_ID = "0193a5d2-9a40-7c55-8e21-6f3b0c4d2a17";
const TASK = `${BASE}/tasks/${TASK_ID}/`;
const WORKER = `${BASE}/users/0193a5d2-8b2f-7d10-a4c3-19e0f6b7c812/`;
const ADMIN = `${BASE}/users/0193a5d2-7c1f-7e02-b1d9-4c8a2e5f6a03/`;
const UPLOAD = `${BASE}/file_uploads/0193a5d3-0c11-7a8e-9d42-5b7e1f3c0a99/`;
const ORDER = `${BASE}/orders/0193a5d2-9a3f-7b21-8c10-3e4d5f6a7b8c/`;

const taskWrite = {
  account: ACCOUNT,
  category: "drop_off",
  address: { raw_address: "Kauppakatu 12, Jyväskylä" },
  contact: { name: "Aino Virtanen", phones: ["+358401234567"], emails: ["aino@example.com"] },
  complete_after: "2026-03-02T08:00:00.000Z",
  complete_before: "2026-03-02T12:00:00.000Z",
  description: "Two parcels; ring the bell at the side door.",
  assignee: WORKER,
  duration: "00:15:00",
  metafields: { customer_ref: "C-1042" },
};

const taskWebhook = {
  url: "https://hooks.example.com/dispatch",
  events: ["task.state_changed", "task_command.rejected"],
  form_response_events: false,
};

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createClient: {
    name: "Kahvila Aalto",
    external_id: "CRM-1042",
    emails: ["orders@aalto.example"],
    phones: ["+358401234567"],
    notes: "Deliveries before 10:00.",
  },
  partialUpdateClient: { notes: "Deliveries before 11:00." },
  createRecurrence: {
    rule: "FREQ=WEEKLY;BYDAY=MO,WE",
    start: "2026-03-02T09:00:00",
    end: null,
    timezone: "Europe/Helsinki",
    assignee: WORKER,
    kind: "task",
    template: taskWrite,
  },
  partialUpdateRecurrence: { rule: "FREQ=WEEKLY;BYDAY=MO,WE,FR" },
  updateRecurrence: {
    rule: "FREQ=WEEKLY;BYDAY=TU",
    start: "2026-03-03T09:00:00",
    kind: "task",
    template: taskWrite,
  },
  updateClient: { name: "Kahvila Aalto", external_id: "CRM-1042" },
  createRoute: { name: "North, Monday", assignee: WORKER, date: "2026-03-02", objective: "distance" },
  partialUpdateRoute: { name: "North, Monday (2)" },
  updateRoute: { name: "North, Monday", assignee: WORKER, date: "2026-03-02" },
  createRouteOptimization: {
    routes: [`${BASE}/routes/0193a5d5-2b3c-7d4e-8f50-6a7b8c9d0e1f/`],
    tasks: [TASK],
    ignore_time_windows: false,
    objective: null,
    apply: true,
  },
  createTracker: {
    tasks: [TASK],
    public_task_fields: ["state", "address.formatted_address", "eta", "assignee.name", "reference"],
    task_popup_template: "Order {{reference}}: {{state}}",
  },
  partialUpdateTracker: { expires_at: "2026-04-01T00:00:00Z" },
  createSms: { to: "+358401234567", message: "Your parcel arrives between 10:00 and 12:00.", task: TASK },
  createMetafield: {
    key: "door_code",
    label: "Door code",
    applies_to: "tasks",
    value_type: "string",
    is_editable_by_worker: false,
  },
  partialUpdateMetafield: { is_required_before_complete: true },
  updateMetafield: { key: "parcels", label: "Parcels", applies_to: "tasks", value_type: "integer" },
  createForm: { name: "Delivery checklist", description: "Before leaving the site." },
  partialUpdateForm: { is_active: false },
  updateForm: { name: "Delivery checklist", description: "Before leaving the site.", is_active: true },
  createFormField: {
    form: `${BASE}/forms/0193a5d4-1a2b-7c3d-8e4f-5a6b7c8d9e0f/`,
    key: "parcel_condition",
    label: "Parcel condition",
    field_type: "select",
    choices: ["intact", "damaged"],
    default: "intact",
    required: true,
    position: 1,
  },
  partialUpdateFormField: { required: false },
  updateFormField: {
    key: "parcel_condition",
    label: "Parcel condition",
    field_type: "select",
    choices: ["intact", "damaged"],
  },
  createFormResponse: {
    form: `${BASE}/forms/0193a5d4-1a2b-7c3d-8e4f-5a6b7c8d9e0f/`,
    task: TASK,
    data: { parcel_condition: "damaged", notes: "Corner crushed" },
  },
  partialUpdateFormResponse: { data: { parcel_condition: "intact" } },
  updateFormResponse: { data: { parcel_condition: "intact", notes: "" } },
  authenticate: { username: "dispatcher@example.com", password: "correct horse battery staple" },
  authorizeSessionToken: { account: ACCOUNT },
  createSessionToken: { name: "ERP integration" },
  createAccount: {
    name: "Acme Deliveries",
    email: "admin@acme.example.com",
    password: "correct horse battery staple",
  },
  activateUser: { token: "Yk2k3J6z0m8yq8mC2x5bKQ4r1TQ0l8vVwX9s7dE3aFg", password: "a long passphrase" },
  bootstrapFirstAdmin: {
    name: "Acme Deliveries",
    email: "ops@acme.example.com",
    password: "correct horse battery staple",
  },
  partialUpdateAccount: {
    language: "fi",
    timezone: "Europe/Helsinki",
    failed_reasons: ["Not at home", "Refused"],
    feature_signer_name: true,
    optimize_earliest_start: "07:30:00",
    optimize_latest_end: "16:00:00",
  },
  createUser: {
    email: "driver@acme.example.com",
    name: "Matti Driver",
    password: "a long passphrase",
    role: "worker",
  },
  partialUpdateUser: { name: "Matti Meikäläinen", is_active: true },
  createAccountRole: { email: "manager@acme.example.com", role: "manager" },
  partialUpdateAccountRole: {
    vehicle_capacity: [1200, 40],
    start_address: { raw_address: "Vasarakatu 29, Jyväskylä" },
    end_address: null,
  },
  confirmVerifyEmailUser: { token: "q3Vt0bE9c2k7Zs1mN8xW4yR6pL5aJ0hF2gD9sK3eT1u" },
  createTask: taskWrite,
  updateTask: taskWrite,
  partialUpdateTask: { description: "Leave at the reception.", complete_before: "2026-03-02T14:00:00.000Z" },
  createOrder: {
    account: ACCOUNT,
    external_id: "ERP-2026-0042",
    reference: "PO 42",
    description: "Weekly restock",
    orderer: { name: "Kahvila Aalto" },
    auto_assign: true,
    tasks_data: [
      { category: "pick_up", address: { raw_address: "Vapaudenkatu 40, Jyväskylä" } },
      { category: "drop_off", address: { raw_address: "Kauppakatu 12, Jyväskylä" } },
    ],
  },
  partialUpdateOrder: { reference: "PO 42 (revised)" },
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
  createTaskCommand: {
    task: TASK,
    external_id: "mobile-7f3a-000123",
    time: "2026-03-02T09:41:07.000Z",
    action: "complete",
    notes: "Signed by the recipient.",
    location: { type: "Point", coordinates: [25.7473, 62.2426] },
  },
  createFileUpload: { file_name: "delivery note.pdf", file_type: "application/pdf" },
  createDocument: {
    account: ACCOUNT,
    task: TASK,
    file_upload: UPLOAD,
    description: "Delivery note",
    visible_to_worker: true,
  },
  partialUpdateDocument: { description: "Delivery note (signed)", visible_to_client: true },
  batchDeleteDocuments: {
    ids: ["0193a5d3-1d22-7b9f-8e53-6c8f2a4d1b00", `${BASE}/documents/0193a5d3-1d22-7b9f-8e53-6c8f2a4d1b01/`],
  },
  createSignature: {
    account: ACCOUNT,
    task: TASK,
    file_upload: UPLOAD,
    description: "Recipient's signature",
  },
  partialUpdateSignature: { visible_to_worker: false },
  batchDeleteSignatures: { ids: ["0193a5d3-2e33-7cab-9f64-7d9a3b5e2c10"] },
  createWebhook: taskWebhook,
  updateWebhook: { ...taskWebhook, state: "active" },
  partialUpdateWebhook: { state: "active" },
};

const task = {
  id: TASK_ID,
  url: TASK,
  account: ACCOUNT,
  state: "assigned",
  category: "drop_off",
  address: {
    raw_address: "Kauppakatu 12, Jyväskylä",
    formatted_address: "Jyväskylä, Finland",
    location: { type: "Point", coordinates: [25.7473, 62.2426] },
    geocoded_at: "2026-03-01T10:00:00.412Z",
    geocode_failed_at: null,
    geocoding_provider: "offline",
  },
  contact: {
    name: "Aino Virtanen",
    company: "",
    emails: ["aino@example.com"],
    phones: ["+358401234567"],
    notes: "",
  },
  complete_after: "2026-03-02T08:00:00.000Z",
  complete_before: "2026-03-02T12:00:00.000Z",
  description: "Two parcels; ring the bell at the side door.",
  assignee: WORKER,
  order: ORDER,
  client: null,
  position: null,
  created_by: ADMIN,
  scheduled_time: null,
  duration: "00:15:00",
  metafields: { customer_ref: "C-1042" },
  route: null,
  recurrence: null,
  form_default_values: {},
  created_at: "2026-03-01T10:00:00.000Z",
  updated_at: "2026-03-01T10:00:00.412Z",
};

const command = {
  id: "0193a5e0-4b7a-7d21-9c3e-8f1a2b3c4d5e",
  url: `${BASE}/task_commands/0193a5e0-4b7a-7d21-9c3e-8f1a2b3c4d5e/`,
  account: ACCOUNT,
  task: TASK,
  user: WORKER,
  external_id: "mobile-7f3a-000123",
  time: "2026-03-02T09:41:07.000Z",
  action: "complete",
  assignee: null,
  task_data: {},
  notes: "Signed by the recipient.",
  location: { type: "Point", coordinates: [25.7473, 62.2426] },
  state: "accepted",
  error_message: "",
  accepted_at: "2026-03-02T09:41:07.815Z",
  rejected_at: null,
  created_at: "2026-03-02T09:41:07.815Z",
  updated_at: "2026-03-02T09:41:07.815Z",
};

const order = {
  id: "0193a5d2-9a3f-7b21-8c10-3e4d5f6a7b8c",
  url: ORDER,
  account: ACCOUNT,
  external_id: "ERP-2026-0042",
  reference: "PO 42",
  client: null,
  metafields: {},
  orderer: { name: "Kahvila Aalto" },
  tasks: [`${BASE}/tasks/0193a5d2-9a40-7c55-8e21-6f3b0c4d2a16/`, TASK],
  assignee: null,
  auto_assign: true,
  created_by: ADMIN,
  created_at: "2026-03-01T10:00:00.000Z",
  updated_at: "2026-03-01T10:00:00.000Z",
  description: "Weekly restock",
  recurrence: null,
  documents: [],
};

const uploadId = "0193a5d3-0c11-7a8e-9d42-5b7e1f3c0a99";
const fileUpload = {
  id: uploadId,
  url: UPLOAD,
  file: `${BASE}/files/fileupload/${uploadId}/delivery%20note.pdf`,
  file_name: "delivery note.pdf",
  file_type: "application/pdf",
  s3_signature: {
    url: `${BASE}/storage/`,
    fields: {
      acl: "public-read",
      "Content-Type": "application/pdf",
      key: `fileupload/${uploadId}/delivery note.pdf`,
      "x-amz-algorithm": "AWS4-HMAC-SHA256",
      "x-amz-credential": "AKIAEXAMPLE/20260301/auto/s3/aws4_request",
      "x-amz-date": "20260301T100000Z",
      policy: "eyJleHBpcmF0aW9uIjoiMjAyNi0wMy0wMVQxMTowMDowMC4wMDBaIiwiY29uZGl0aW9ucyI6W119",
      "x-amz-signature": "5f1c0e3d9a7b2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e",
    },
  },
  created_by: ADMIN,
  source: "",
  uploaded_at: null,
  created_at: "2026-03-01T10:00:00.000Z",
  updated_at: "2026-03-01T10:00:00.000Z",
};

export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  "authenticate 200": {
    token: "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIiwidHlwIjoic2Vzc2lvbitqd3QifQ.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl",
  },
  "createTaskCommand 201": command,
  "retrieveTaskCommand 200": command,
  "createOrder 201": order,
  "retrieveOrder 200": order,
  "createFileUpload 201": fileUpload,
  "createTask 201": task,
  "retrieveTask 200": task,
  "partialUpdateTask 200": task,
  "updateTask 200": task,
  "listTasks 200": { next: `${BASE}/tasks/?cursor=eyJ2IjoxfQ`, previous: null, results: [task] },
};
