/**
 * The prose of the OpenAPI document: `info.description` and the tag descriptions. A reader of
 * a deployed /docs/ has no README, so what a client needs to know beyond the schemas is here
 * (CommonMark, as OpenAPI 3.1 says for every description).
 */

export const API_DESCRIPTION = `
Dispatch field work: tasks, the commands that move them through their states, orders that group
them, files and signatures attached to them, and webhooks that tell your systems what changed.

## Conventions
- **Paths end with a slash** (\`/tasks/\`, \`/tasks/{id}/\`). Before 2.10.0 a path without it is
  served as if it had one; from 2.10.0 on it is 404. \`/openapi.json\`, \`/docs/\`, \`/storage/\` and
  \`/files/...\` are outside this rule.
- **JSON in and out**, UTF-8. A JSON body of another media type is 415; a body over 10 MiB is 413;
  malformed JSON is 400.
- **Hyperlinks.** Related objects are written and read as URLs, \`{base_url}/<collection>/<uuid>/\`.
  A bare UUID is accepted on input; the host is not compared. Each link's \`pattern\` is the syntax
  the service takes (else \`Invalid hyperlink - No URL match.\`). A link to an object that does not
  exist, or belongs to another account, is the field error \`Invalid hyperlink - Object does not exist.\`
- **Request ids.** Every response carries \`X-Request-Id\` (yours, if you sent a well-formed one).
  Quote it when you report a problem; a 500 answer repeats it in its body.

## Reading your own writes
Reads may be served by a replica of the database near you (D1 read replication). Every answer that
touched the database carries \`X-D1-Bookmark\`; send the latest one you received back in
\`X-D1-Bookmark\` and your request reads at least what that answer had written (a command's answer
covers its task's write). Each bookmark names the database it belongs to (\`SHARD_<n>:…\`, \`DB:…\` the
directory); one of a database the request does not use, or anything malformed, is ignored (never a 400)
and never echoed.

## Versions
Send \`Accept: application/json; version=X.Y.Z\` to pick the behaviour of a release. Without it, the
version pinned on your account applies (\`api_version\`, changeable with \`PATCH /accounts/{id}/\`),
else the newest. The version in effect comes back in \`X-API-Version\` on every response. An unknown
version is 400 with code \`not_acceptable_version\`.

## Authentication
\`POST /authenticate/\` trades an e-mail and password for a session JWT (30 days); send it as
\`Authorization: Bearer <token>\`. \`POST /session_tokens/authorize/\` exchanges a session for an
authorization JWT of one account (15 minutes). Integration users can create long-lived access
tokens (\`fda_...\`, also accepted as \`Authorization: Token <token>\`). Every token is revocable and
revocation takes effect on the next request. Operations marked with an empty security requirement
(\`POST /authenticate/\`, \`POST /accounts/\`, \`POST /storage/\`, \`GET /files/...\`, \`GET /t/{token}/\`) need no
token; a token sent to an API operation must still be valid (\`GET /\` and \`GET /health/\` answer a bad one with 401).

## Errors
HTTP errors are \`{"detail": "...", "code": "..."}\`; match on \`code\` (the \`Error\` schema lists
every code), never on \`detail\`. Validation errors (400) are field maps in the style of Django REST
framework: \`{"field": ["message"], "nested": {"field": [...]}, "non_field_errors": [...]}\`; a missing
field reads \`This field is required.\`; an unknown query parameter on a list is
\`{"<name>": ["Unknown query parameter."]}\`. For array bodies the errors are an array aligned
with the input (\`{}\` for valid items). 401 answers carry \`WWW-Authenticate\`, 405 answers \`Allow\`,
429 answers \`Retry-After\`. While the operator moves your account to another database (about 20
seconds for a small account), its writes (any method but GET, HEAD and OPTIONS) answer 503 with code
\`service_unavailable\` and \`Retry-After\`, and change nothing; reads go on. Send the write again
then (a command with the same \`external_id\` is safe to repeat). This 503 is listed here once,
not on every operation.

## Pagination
Lists answer \`{"next", "previous", "results"}\`. \`next\` and \`previous\` are complete URLs (null at the
ends) carrying an opaque \`cursor\`: follow them rather than building cursors. \`page_size\` defaults to
50, at most 500. \`GET /accounts/\` and \`GET /session_tokens/\` answer every item in one page.

## Time zones
Timestamps are RFC 3339 with milliseconds, in UTC (\`2026-01-02T03:04:05.000Z\`). Send
\`Accept-Timezone: <IANA zone>\` (e.g. \`Europe/Helsinki\`) to have them rendered with that zone's offset,
and to write local times without an offset, which are then read in that zone. An unknown zone is 400
with code \`invalid_timezone\`. Dates as written are taken from 1970-01-01 to 2099-12-31 (each input
timestamp's \`pattern\`).

## Rate limits
Requests are counted per token (anonymous requests: per client address) in one-second windows. Every
counted response carries the fields of the IETF RateLimit header fields draft, \`RateLimit-Policy:
"default";q=<quota>;w=1\` and \`RateLimit: "default";r=<remaining>;t=<seconds to reset>\`, and its
earlier \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` fields. Past the limit: 429,
code \`throttled\`, with \`Retry-After\`. Stored files (\`/files/...\`) are not counted.

## Uploads
Files are uploaded straight to storage with a signed form: \`POST /file_uploads/\` answers an AWS
Signature Version 4 POST policy (\`s3_signature\`), which you post, with the file as the last part, to
its \`upload_url\` (\`POST /storage/\` on this service). Then attach the upload to a task as a document
or a signature. Stored files are served at their \`file\` (or \`thumbnail\`) URL, \`/files/<key>\`: each shape of key
the service hands out is a path of its own below (\`/files/documents/{id}/{file_name}\`, ...), because a path
parameter cannot hold a slash. Take the URL from the object rather than building it. A file is sent with its stored
media type (hence \`*/*\`), with byte ranges and conditional requests.

## Using this document
- **Batches.** \`POST /orders/\` and \`POST /task_commands/\` take one object or an array (JSON Schema \`oneOf\`), and
  answer in kind, errors included: an array body gets an array of answers or of field maps, in input order.
- **Names.** Request bodies are \`<Resource>Create\` (POST), \`<Resource>Update\` (PUT), \`<Resource>Patch\` (PATCH)
  and \`<Resource><Action>\` (an action, e.g. \`DocumentBatchDelete\`); answers are \`<Resource>\`; nested inputs
  \`<Thing>Input\`.
- **Metafield filters** of \`GET /tasks/\` are the \`metafields\` parameter (\`deepObject\`:
  \`?metafields[door_code]=4711\`), which generated clients send from \`{metafields: {door_code: "4711"}}\`; the
  same filter is also accepted as \`?metafields__door_code=4711\`.
- **Examples.** Request examples are meant to be tried in the order of this document on a new account: each uses
  only objects that earlier examples made (ids in them are placeholders for yours). Answer examples are recorded
  from the service itself, with ids, times and secrets replaced by placeholders.
- **Headers.** Every answer carries \`X-Request-Id\` and \`X-API-Version\` (stored files and public pages too).

## Commands and webhooks
A task's state changes only through task commands (\`POST /task_commands/\`), applied one at a time
per task, each \`accepted\` or \`rejected\`. Changes are recorded as events (\`GET /events/\`) and delivered
to webhooks: see the \`webhooks\` section of this document for each event's payload, its delivery
headers and how to check its signature.
`.trim();

export const TAGS: { name: string; description: string }[] = [
  {
    name: "Service",
    description:
      "The API root (links to the docs, this document and the main collections) and `GET /health/` for " +
      "load balancers and uptime monitors: 200 when the database answers, 503 when it does not, no token " +
      "needed and no configuration revealed. Browsers may call the document, the health check and the " +
      "anonymous endpoints from any origin; the rest of the API answers the origins of `CORS_ORIGINS`.",
  },
  {
    name: "Accounts",
    description:
      "An account is one organisation's data. `POST /accounts/` signs up (when the deployment allows it) and " +
      "makes the caller its admin. An account pins the API version its requests get by default (`api_version`).",
  },
  {
    name: "Users",
    description:
      "People and integrations. E-mails are unique across the service (case-insensitive). A user created " +
      "without a password cannot sign in until one is set. `role` in a user's body is the role in the " +
      "caller's account.",
  },
  {
    name: "Account roles",
    description:
      "Membership of a user in an account, with a role: `admin`, `manager`, `worker` or `integration`. " +
      "`POST` adds an existing user (by `user` link or `email`).",
  },
  {
    name: "Authentication",
    description:
      "Sign in, sign out, and manage tokens. Session JWTs (HS256, 30 days) come from `POST /authenticate/`; " +
      "authorization JWTs (one account, 15 minutes) from `POST /session_tokens/authorize/`, extended by " +
      "`POST /session_tokens/refresh/`. Access tokens (`fda_...`, no expiry) are for integration users. " +
      "Every token is stored, so `POST /logout/` and `DELETE /session_tokens/{id}/` take effect on the next " +
      "request; revoking a session also revokes the authorization tokens made from it.",
  },
  {
    name: "Webhooks",
    description:
      "Subscriptions to events, delivered by HTTPS POST following Standard Webhooks (see the `webhooks` " +
      "section for every payload). `secret` (`whsec_` + base64) is shown once, in the answer to `POST`. " +
      "Delivery is at least once and unordered: deduplicate on `webhook-id`. Any 2xx is success; redirects " +
      "are not followed. Failed deliveries are retried for about 2.5 days (a longer `Retry-After` wins); " +
      '410 Gone or the last failure sets the webhook `failed`, and `PATCH {"state": "active"}` resumes ' +
      "it. Webhook URLs must be public https URLs. The delivery log can be read and deliveries redelivered.",
  },
  {
    name: "Metafields",
    description:
      "Definitions of custom fields on tasks, orders, routes and contact addresses (admins and managers write; everyone reads). " +
      "Every write of a `metafields` object is validated against them: an unknown key is `Unknown metafield.`, a wrong type or " +
      "choice names the expected one. A task's required metafields must be set before `complete`; a worker's `update` may not " +
      "touch one that is not editable by workers.",
  },
  {
    name: "Clients",
    description:
      "The customers orders and tasks are for (dispatchers only). `external_id` is unique in the account; a POST with a known " +
      "one updates that client. Orders and tasks carry `client` and filter by it (`?client=`).",
  },
  {
    name: "Contact addresses",
    description:
      "Reusable addresses and contacts, unique per account by `external_id`. A task copies them when " +
      "created; later changes to the contact address do not change existing tasks.",
  },
  {
    name: "Tasks",
    description:
      "A unit of field work at an address. Create needs `account`, `category` and `address` (or a contact " +
      "address that supplies it); the address is geocoded (text only: geocoded; a point only: reverse " +
      "geocoded; both: stored as sent). Writes go through the task's own serialised writer, so they never " +
      "interleave with commands. The state never changes by PATCH or PUT: use task commands. Workers see " +
      "only their own tasks; anything else is 404. Lists filter on state, category, assignee, order, " +
      "contact address, times (`__gte`, `__lte`, `__isnull`) and sort with `ordering`; for a reliable sync, " +
      "page by `updated_at__gt` with `ordering=updated_at&updated_at_delay_latest=true`.",
  },
  {
    name: "Orders",
    description:
      "A group of tasks with an `external_id`. `POST` takes one order or an array (each order one " +
      "transaction; for an array, nothing is stored if any item is invalid) and upserts by `external_id`: " +
      "`tasks_data[i]` updates the order's i-th task, extra entries create tasks, tasks past the end that " +
      "have not started are cancelled. 201 if any order was created, 200 if all were updates.",
  },
  {
    name: "Task commands",
    description:
      "The only way a task's state changes: `assign`, `accept`, `transit`, `activate`, `complete`, `fail`, " +
      "`cancel`, `update` and the others of the state machine. Post one command or an array of up to 500 " +
      "(for one or several tasks). Each command is applied inside its task's serialised writer, checked " +
      "against the task's version, and stored `accepted` or `rejected` (with the reason); a command the " +
      "caller may not send is `rejected`, never an error. `external_id` makes a command idempotent.",
  },
  {
    name: "Positions",
    description:
      "Where the workers are (contract §28): a worker on duty (`on_duty` on its account role, set by itself, " +
      "a manager or an admin) sends its positions, one or a batch of up to 500 in any order (a phone back " +
      "online); positions too close in time to a stored one are dropped and counted. Dispatchers read a " +
      "user's trail and its latest `position` on the user; tasks' `eta` and `is_late` follow from it, and " +
      "`task.late` is made once per task and window. Kept `position_retention_days`, then deleted.",
  },
  {
    name: "Events",
    description:
      "Every change that webhooks deliver, readable by polling: oldest first, catch up with " +
      "`?after=<last processed id>` and follow `next`. An event is listed once it is a few seconds old, so " +
      "a poller never skips one that committed late.",
  },
  {
    name: "File uploads",
    description:
      "`POST /file_uploads/` `{file_name, file_type}` answers `s3_signature`: a signed form (AWS Signature " +
      "Version 4 POST policy, valid for one hour) to post the file to `upload_url`. `uploaded_at` is null " +
      "until the file is stored. The upload is then attached as a document or a signature.",
  },
  {
    name: "Storage",
    description:
      "Not JSON: the S3-compatible upload endpoint (`POST /storage/`, the `upload_url` of file uploads) and " +
      "the stored files (`GET /files/...`, one path per shape of key). Both are anonymous: the signed form, and the unguessable id in " +
      "a file's key, are the authorization. Errors are S3's XML.",
  },
  {
    name: "Documents",
    description:
      "Files attached to a task (and its order): an uploaded file is copied under the document's own key. " +
      "`mimetype` comes from the bytes; `thumbnail` is made in the background for images. Workers see the " +
      "documents of their own tasks that are `visible_to_worker`. `batch_delete` deletes up to 500 at once, " +
      "or nothing. Deleting a task keeps its documents.",
  },
  {
    name: "Signatures",
    description: "Proof-of-delivery signatures: the same shape and rules as documents.",
  },
  {
    name: "Routes",
    description:
      "One worker's ordered stops on a date. A task joins a route through its `route` field (and `position`). States: `draft` on " +
      "creation, `active` (`activate` needs an assignee and a task, and assigns the route's waiting tasks to the assignee with " +
      "commands), `archived` (read-only). `start_address`/`end_address` default to the assignee's account-role addresses.",
  },
  {
    name: "Route optimizations",
    description:
      "Solving routes: POST answers 202 `queued`; a queue consumer solves with the service's own solver (SISR) on a travel matrix " +
      "(offline great-circle × 1.3, or an OSRM `/table` service) and writes `result`; with `apply`, each task's `route`, " +
      "`position` and assignee are written through task commands recorded for the caller.",
  },
  {
    name: "Trackers",
    description:
      "A public page for some tasks (a list, or an order's): `public_url` answers without authentication, JSON with " +
      '`Accept: application/json` (`{"tasks": [...]}`: the allowlisted fields, `eta` or `predicted_delivery_error` in the ' +
      "language of `Accept-Language`; times in ISO 8601 UTC), else an HTML page that refreshes itself every 30 s, in the same " +
      "language, its times in the account's `timezone`. Expired or deleted: 404.",
  },
  {
    name: "SMS",
    description:
      "Text messages sent from a queue through the configured provider (local: stored as sent; Twilio). A duplicate (same phone " +
      "and message within SMS_DUPLICATE_SEND_WINDOW_SECONDS) answers the existing SMS; `resend` always sends a fresh one. " +
      "Delivery receipts come to `POST /sms/status/`, signed by the provider.",
  },
  {
    name: "Notification templates",
    description:
      "Messages to a task's contact when the task is assigned, in transit, completed or failed: each active template of the event " +
      "sends one SMS to each contact phone, or one e-mail to each contact e-mail (and the assignee, with the account's " +
      "`review_emails_to_assignee`), once per task, event, template and recipient. Placeholders: the public task fields and " +
      "`{{tracker_url}}` (a tracker of the task, made when none is live). `task_completed` e-mails attach the POD as a PDF.",
  },
  {
    name: "Forms",
    description:
      "Checklists and inspection forms dispatchers design (admins, managers, integrations write; every member reads). " +
      "Deleting a form deletes its fields and draft responses; completed responses stay, readable from their snapshot.",
  },
  {
    name: "Form fields",
    description:
      "The fields of a form, listed by `position`: `text`, `textarea`, `number`, `boolean`, `date`, `time`, `datetime`, " +
      "`select`, `multiselect` (with `choices`), `photo` (a document of the response's task), `signature` (a signature of it) " +
      "and `section` (no value; `collapsed` and `layout` group what follows). At most `MAX_FORM_FIELDS` (500) per form.",
  },
  {
    name: "Form responses",
    description:
      "A form filled in, usually for a task. `data` is validated by field type on every write (unknown keys are field errors); " +
      "`required` is checked on `complete`, which freezes the response with a `schema_snapshot` and emits `form_response.completed` " +
      "(to webhooks with `form_response_events: true` only). Workers read and write the responses of their own tasks, without the " +
      "fields hidden from workers.",
  },
  {
    name: "Recurrences",
    description:
      "Tasks or orders made on an RFC 5545 RRULE from a local `start` in `timezone` (dispatchers only; workers 403). A cron makes " +
      "every occurrence within RECURRENCE_HORIZON_DAYS (7) exactly once, through the same checks as POST /tasks/ or /orders/; " +
      "daylight-saving changes keep the local time. POST /tasks/ or a single POST /orders/ with `recurrence` makes the first " +
      "occurrence at once. PATCH changes only occurrences not yet made; DELETE or `is_active: false` stops the rest.",
  },
  {
    name: "Exports",
    description:
      "Tasks (`/task_exports/`) or contact addresses (`/contact_address_exports/`) to a CSV (RFC 4180, UTF-8, formula cells " +
      "prefixed with `'`) or JSON Lines file: POST answers 202 `queued`; a queue consumer writes the file page by page into an " +
      "R2 multipart upload (`row_count` grows while `running`), then `file` is a short-lived signed download link (Range, " +
      "ETag), until `file_expires_at` (`EXPORT_FILE_TTL_DAYS`, 7). Columns are field names, dotted sub-fields and " +
      "`metafields.<key>`; filters are the task list's query parameters. A queued or running export can be cancelled; " +
      "DELETE removes it with its file.",
  },
  {
    name: "Archives",
    description:
      "Retention (contract §23): rows past their window leave D1 for R2, gzip JSON Lines, one object per account, kind and " +
      "day, written and verified before the rows are deleted. Windows (settings, days): events and webhook deliveries 30, " +
      "SMS and e-mails 90, finished jobs (exports, imports, route optimizations) 90, dead letters 90 (the operator's, not " +
      "listed); finished tasks after the account's `data_retention_days` (null: kept), with their commands, documents, " +
      "signatures (their files deleted), form responses and notification records, an order with its last task. Spent and " +
      "expired tokens (30 days) and sign-in limit records (1 day) are deleted, not archived. Admins list the objects with " +
      "signed links.",
  },
  {
    name: "Imports",
    description:
      "Orders, tasks or contact addresses from an uploaded CSV whose columns are an export's field names: the header is checked " +
      "at once (unknown columns: 400), then a queue consumer checks the whole file (UTF-8, RFC 4180, MAX_IMPORT_ROWS) and applies " +
      "the rows in chunks through the same services as the API, never twice; `errors` lists the first 1,000 row errors, " +
      "numbered as a spreadsheet numbers rows. `dry_run` applies nothing.",
  },
  {
    name: "Outbox",
    description:
      "The e-mails the service would send (invitations, activation links), as the local e-mail provider " +
      "keeps them: for development and trials (`EMAIL_PROVIDER=local`), admins only. Deployments that send " +
      "mail (`EMAIL_PROVIDER=workers`) answer 404 here.",
  },
];
