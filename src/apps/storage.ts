import { getPath } from "hono/utils/url";
import { mountStorage } from "../api/storage";
import { notFound, renderError } from "../http/errors";
import { anonymousCaller, publicCors, rateLimit, requestContext, timeZone } from "../http/middleware";
import { createRouter } from "../http/openapi";
import { STORAGE_PREFIX } from "../http/urls";
import { methodNotAllowedOr404 } from "./fallback";

/**
 * S3's surface in front of R2: `POST /storage/` (the signed form is the authorization) and
 * `GET /files/<key>` (the key is the capability). No token, no trailing-slash rule, no JSON
 * body limit (the upload streams); uploads are rate limited per client, stored files are not
 * (a page of 50 thumbnails is 50 requests).
 */
export function createStorageApp() {
  const app = createRouter();
  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => renderError(notFound(), c));

  app.use("*", requestContext);
  app.use("*", publicCors);
  app.use("*", anonymousCaller);
  app.use("*", timeZone);
  app.use(STORAGE_PREFIX, rateLimit);
  app.use(`${STORAGE_PREFIX}/*`, rateLimit);

  mountStorage(app);
  methodNotAllowedOr404(app, getPath);
  return app;
}
