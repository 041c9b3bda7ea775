// Types of test/providers/server.mjs (a Node module: vitest's global setup).
export const TWILIO_TEST_AUTH_TOKEN: string;
export const OSRM_MAX_TABLE_SIZE: number;
export const OSRM_DETOUR: number;
export const OSRM_SPEED: number;
export default function setup(ctx: {
  provide: (key: "providers", value: { url: string }) => void;
}): Promise<() => Promise<void>>;
