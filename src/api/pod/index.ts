import { createRoute, z } from "@hono/zod-openapi";
import { pathId, requireUser } from "../../http/guards";
import { defineRoute, errorResponses, type Router, security, uuidParam } from "../../http/openapi";
import { hyperlinkSchema } from "../../http/urls";
import { renderPodHtml } from "../../render/pod";
import { renderPodPdf } from "../../render/pod-pdf";
import { documentFonts } from "../../services/documents/fonts";
import {
  POD_OPTIONS,
  type PodOptions,
  podData,
  podImageLoader,
  templatePodOptions,
} from "../../services/pod";

const bool = z.enum(["true", "false"]).optional();

export const podTaskRoute = createRoute({
  method: "get",
  path: "/tasks/{id}/pod/",
  operationId: "podTask",
  tags: ["Tasks"],
  security,
  summary: "The task's proof of delivery, as HTML or PDF",
  description:
    "For a completed or failed task (otherwise 400): task, contact, address, completion time and place, photos, signatures " +
    "with signer names, history, order reference, description, each shown per the account's `pod_show_*` options, " +
    "overridden by a notification template's (`?template=<id>`: those it sets), then by the query's (`?pod_show_images=false`, ...). " +
    "A `template` that is not one of the account's is 400. A PDF with `Accept: application/pdf` or `?format=pdf`; " +
    "images are embedded as their thumbnails where they have one. Written in the language of `Accept-Language` " +
    "(de, en, es, et, fi, fr, it, lt, lv, pl, ru, sv; q-values honoured, `fi-FI` reads as `fi`), else the account's " +
    "`language`; times in the account's time zone, named.",
  request: {
    params: uuidParam,
    query: z
      .object({
        format: z.enum(["html", "pdf"]).optional(),
        template: hyperlinkSchema(
          "notification_templates",
          "A notification template's id (or URL): its POD options.",
        ).optional(),
        ...Object.fromEntries(POD_OPTIONS.map((o) => [o, bool])),
      })
      .strict(),
  },
  responses: {
    200: {
      description: "The proof of delivery.",
      content: {
        "text/html": { schema: z.string() },
        "application/pdf": { schema: z.string().openapi({ format: "binary" }) },
      },
    },
    ...errorResponses,
  },
});

export function mountPod(app: Router) {
  defineRoute(app, podTaskRoute, async (c) => {
    const p = requireUser(c);
    const q = c.req.valid("query") as Record<string, string | undefined>;
    const overrides: Partial<PodOptions> =
      q.template !== undefined ? await templatePodOptions(c.env.DB, p, q.template) : {};
    for (const o of POD_OPTIONS) if (q[o] !== undefined) overrides[o] = q[o] === "true";
    const data = await podData(c.env, p, pathId(c), overrides, c.get("baseUrl"), {
      acceptLanguage: c.req.header("Accept-Language"),
    });
    // `?format=` wins; else the Accept header asks for a PDF.
    const pdf =
      q.format === "pdf" ||
      (q.format === undefined && /\bapplication\/pdf\b/i.test(c.req.header("Accept") ?? ""));
    if (pdf) {
      const bytes = await renderPodPdf(data, podImageLoader(c.env.FILES), await documentFonts(c.env));
      return c.body(new Uint8Array(bytes), 200, {
        "Content-Type": "application/pdf",
        "Content-Disposition": `inline; filename="pod-${data.task.id}.pdf"`,
        "Content-Language": data.language,
        Vary: "Accept, Accept-Language",
      });
    }
    return c.body(renderPodHtml(data), 200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Language": data.language,
      Vary: "Accept, Accept-Language",
      // The page's images are this service's stored files; nothing else loads.
      "Content-Security-Policy":
        "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    });
  });
}
