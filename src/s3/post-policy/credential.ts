/** The credential scope of a POST form: `<AKID>/<yyyyMMdd>/<region>/s3/aws4_request` (SigV4). */
import { invalidArgument } from "../s3-errors";
import { SIGV4_TERMINATOR } from "../sigv4";

export const SERVICE = "s3";

const CREDENTIAL_FORMAT =
  'the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".';

export interface ParsedCredential {
  accessKeyId: string;
  date: string;
  region: string;
}

export function parseCredential(credential: string, expectedRegion: string | undefined): ParsedCredential {
  const bad = (message: string, extra: Record<string, string> = {}) => {
    const err = invalidArgument(message, "X-Amz-Credential", credential);
    Object.assign(err.details, extra);
    return err;
  };
  const parts = credential.split("/");
  if (parts.length !== 5) throw bad(CREDENTIAL_FORMAT);
  const [accessKeyId, date, region, service, terminal] = parts;
  if (accessKeyId === "") throw bad("a non-empty Access Key (AKID) must be provided in the credential.");
  if (!/^\d{8}$/.test(date)) {
    throw bad(
      `incorrect date format "${date}". This date in the credential must be in the format "yyyyMMdd".`,
    );
  }
  if (region === "") throw bad(CREDENTIAL_FORMAT);
  if (expectedRegion !== undefined && region !== expectedRegion) {
    throw bad(`the region '${region}' is wrong; expecting '${expectedRegion}'`, { Region: expectedRegion });
  }
  if (service !== SERVICE)
    throw bad(`incorrect service "${service}". This endpoint belongs to "${SERVICE}".`);
  if (terminal !== SIGV4_TERMINATOR) {
    throw bad(`incorrect terminal "${terminal}". This endpoint uses "${SIGV4_TERMINATOR}".`);
  }
  return { accessKeyId, date, region };
}
