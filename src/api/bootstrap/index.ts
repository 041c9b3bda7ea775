import { createRoute, z } from "@hono/zod-openapi";
import { defineRoute, errorResponses, jsonBody, jsonResponse, type Router } from "../../http/openapi";
import { renderCtx } from "../../http/serialize";
import { bootstrapFirstAdmin } from "../../services/accounts/bootstrap";
import { AccountSchema, SignUpSchema, serializeAccount } from "../accounts/schema";

export const createBootstrapRoute = createRoute({
  method: "post",
  path: "/bootstrap/",
  tags: ["Accounts"],
  security: [],
  summary: "Create the first admin of an empty deployment (one time, with the BOOTSTRAP_TOKEN secret)",
  description:
    "For deployments where sign-up is closed. Send the `BOOTSTRAP_TOKEN` secret in `X-Bootstrap-Token`. " +
    "Works only while the database has no account at all; afterwards (or without the secret) it is 403. " +
    "`npm run create-admin` calls it; delete the secret once it has.",
  request: {
    headers: z.object({
      "x-bootstrap-token": z
        .string()
        .optional()
        .openapi({ description: "The deployment's `BOOTSTRAP_TOKEN` secret (without it: 403)." }),
    }),
    ...jsonBody(SignUpSchema.openapi("BootstrapCreate")),
  },
  responses: {
    201: jsonResponse(AccountSchema, "The first account; its admin can sign in."),
    ...errorResponses,
  },
});

export function mountBootstrap(app: Router) {
  defineRoute(app, createBootstrapRoute, async (c) => {
    const { account } = await bootstrapFirstAdmin(
      c.env,
      c.req.header("X-Bootstrap-Token"),
      c.req.valid("json"),
    );
    return c.json(serializeAccount(renderCtx(c), account), 201);
  });
}
