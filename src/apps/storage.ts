import { getPath } from "hono/utils/url";
import { mountStorage } from "../api/storage";
import { notFound, renderError } from "../http/errors";
import { anonymousCaller, publicCors, rateLimit, requestContext, timeZone } from "../http/middleware";
import { createRouter } from "../http/openapi";
import { STORAGE_PREFIX } from "../http/urls";
import { keyFromFilesPath } from "../s3/keys";
import { isPrivateKey } from "../s3/signed-links";
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
  // Stored files are anyone's by their key, as S3's public-read objects; private ones (exports,
  // the archive: a signed link each) get no CORS, so no page of another origin reads them.
  app.use("*", (c, next) => {
    const key = keyFromFilesPath(getPath(c.req.raw));
    return key !== null && isPrivateKey(key) ? next() : publicCors(c, next);
  });
  app.use("*", anonymousCaller);
  app.use("*", timeZone);
  app.use(STORAGE_PREFIX, rateLimit);
  app.use(`${STORAGE_PREFIX}/*`, rateLimit);

  mountStorage(app);
  methodNotAllowedOr404(app, getPath);
  return app;
}
