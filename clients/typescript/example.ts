/**
 * A small program written against the generated client only (issue 26's third-party check): it
 * creates a task, sends a batch of commands, attaches a file and reads it back, filters tasks by
 * a metafield, all typed from /openapi.json and without a single cast. test/openapi/client.test.ts
 * runs it against the service; `npm run check:client` compiles it against freshly generated types.
 */
import type { DispatchClient, Schemas } from "./index";

export async function dispatchExample(api: DispatchClient, account: string) {
  // A task: the body is TaskCreate, the answer a Task.
  const created = await api.POST("/tasks/", {
    body: {
      account,
      category: "drop_off",
      address: { raw_address: "Kauppakatu 12, Jyväskylä" },
      contact: { name: "Aino Virtanen" },
      complete_after: "2030-06-03T08:00:00.000Z",
      complete_before: "2030-06-03T12:00:00.000Z",
      metafields: { door_code: "4711" },
    },
  });
  if (!created.data) throw new Error(`task: ${JSON.stringify(created.error)}`);
  const task: Schemas["Task"] = created.data;

  // A batch of commands: an array in, an array out (`TaskCommand | TaskCommand[]`, narrowed).
  const batch = await api.POST("/task_commands/", {
    body: [
      {
        task: task.url,
        external_id: `example-${task.id}-1`,
        time: "2030-06-03T08:05:00.000Z",
        action: "update",
        task_data: { position: 1 },
      },
      {
        task: task.url,
        external_id: `example-${task.id}-2`,
        time: "2030-06-03T08:06:00.000Z",
        action: "cancel",
      },
    ],
  });
  if (!batch.data) throw new Error(`commands: ${JSON.stringify(batch.error)}`);
  const commands: Schemas["TaskCommand"][] = Array.isArray(batch.data) ? batch.data : [batch.data];

  // A file: a signed upload form, the bytes posted to it (S3's POST Object, not JSON), a document.
  const upload = await api.POST("/file_uploads/", {
    body: { file_name: "delivery note.txt", file_type: "text/plain" },
  });
  if (!upload.data) throw new Error(`upload: ${JSON.stringify(upload.error)}`);
  const stored = await api.POST("/storage/", {
    body: {
      ...upload.data.s3_signature.fields,
      file: new Blob(["Two parcels, signed for.\n"], { type: "text/plain" }),
    },
    // multipart/form-data, the file last (S3 takes the parts after it for nothing).
    bodySerializer: ({ file, ...fields }) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields))
        if (typeof value === "string") form.append(name, value);
      if (file instanceof Blob) form.append("file", file, "delivery note.txt");
      return form;
    },
  });
  if (stored.response.status !== 204) throw new Error(`storage: ${stored.response.status}`);
  const document = await api.POST("/documents/", {
    body: { account, task: task.url, file_upload: upload.data.url, description: "Delivery note" },
  });
  if (!document.data) throw new Error(`document: ${JSON.stringify(document.error)}`);

  // Read it back through its documented path (`file` is /files/documents/{id}/{file_name}).
  const [id, fileName] = new URL(document.data.file).pathname.split("/").slice(3).map(decodeURIComponent);
  const file = await api.GET("/files/documents/{id}/{file_name}", {
    params: { path: { id, file_name: fileName } },
    parseAs: "text",
  });

  // A metafield filter, sent by the client as the deepObject `metafields[door_code]=...`.
  const filtered = await api.GET("/tasks/", { params: { query: { metafields: { door_code: "4711" } } } });

  return {
    task,
    commands,
    text: file.data ?? null,
    contentType: file.response.headers.get("Content-Type"),
    filteredCount: filtered.data?.results.length ?? null,
  };
}
