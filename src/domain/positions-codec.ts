/**
 * Workers' trails in compact blocks (contract §28, migration 0038): a slice (one worker, six
 * hours) is one blob of its positions in time order, each stored as the difference from the one
 * before it, so a phone's position every 15 s costs ~10 bytes instead of a row of ~100.
 *
 * Values are kept as integers at the precision a phone's position has: time in milliseconds,
 * latitude and longitude in millionths of a degree (about 0.1 m, well below a GPS fix's
 * accuracy), accuracy and speed in tenths (m, m/s), heading in tenths of a degree. Each record:
 * - a flags byte: which of accuracy, speed, heading it carries (each is optional);
 * - the time since the record before (the first: since the slice's start), an unsigned varint;
 * - latitude and longitude, then each value present, as the difference from the previous
 *   record's (the first record: from 0), zigzag varints (the encoding of Protocol Buffers'
 *   `sint64`, https://protobuf.dev/programming-guides/encoding/#signed-ints).
 * Appending needs only the slice's last record (`Quantized`), so a flush writes `data || new`.
 * Pure: no I/O.
 */

/** One position as stored: integers (see above); null where the phone gave no value. */
export type Quantized = {
  t: number;
  lat: number;
  lon: number;
  acc: number | null;
  spd: number | null;
  hdg: number | null;
};

/** One position as the API takes and gives it. */
export type PositionValue = {
  time: number;
  lon: number;
  lat: number;
  accuracy_m: number | null;
  speed_mps: number | null;
  heading_deg: number | null;
};

/**
 * Six hours: a slice of a phone sending every 15 s is ~14 KB, which SQLite keeps in overflow
 * pages filled to the brim; an hour's ~2.4 KB would leave a third of every 4 KB page empty (one
 * such row fits a page, two do not). Measured in bench/README.md (section 17).
 */
export const SLICE_MS = 6 * 3_600_000;
export const sliceOf = (ms: number) => Math.floor(ms / SLICE_MS);

const DEG = 1e6;
const TENTHS = 10;
const tenths = (v: number | null) => (v === null ? null : Math.round(v * TENTHS));

export function quantize(p: PositionValue): Quantized {
  return {
    t: Math.round(p.time),
    lat: Math.round(p.lat * DEG),
    lon: Math.round(p.lon * DEG),
    acc: tenths(p.accuracy_m),
    spd: tenths(p.speed_mps),
    // 360.0 is 0.0: one value per direction.
    hdg: p.heading_deg === null ? null : Math.round(p.heading_deg * TENTHS) % 3600,
  };
}

export function dequantize(q: Quantized): PositionValue {
  const back = (v: number | null) => (v === null ? null : v / TENTHS);
  return {
    time: q.t,
    lat: q.lat / DEG,
    lon: q.lon / DEG,
    accuracy_m: back(q.acc),
    speed_mps: back(q.spd),
    heading_deg: back(q.hdg),
  };
}

const ACC = 1;
const SPD = 2;
const HDG = 4;

/** Zigzag (sint) and varint, on numbers up to 2^52: beyond 32 bits, so arithmetic, not bit ops. */
function writeVarint(out: number[], n: number) {
  while (n >= 128) {
    out.push((n % 128) + 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
}
const zigzag = (n: number) => (n >= 0 ? n * 2 : -n * 2 - 1);
const unzigzag = (n: number) => (n % 2 === 0 ? n / 2 : -(n + 1) / 2);

/** The state a record is encoded against: the record before it, or the slice's start. */
type Prev = { t: number; lat: number; lon: number; acc: number; spd: number; hdg: number };
const startOf = (slice: number): Prev => ({ t: slice * SLICE_MS, lat: 0, lon: 0, acc: 0, spd: 0, hdg: 0 });
const prevOf = (q: Quantized, before: Prev): Prev => ({
  t: q.t,
  lat: q.lat,
  lon: q.lon,
  acc: q.acc ?? before.acc,
  spd: q.spd ?? before.spd,
  hdg: q.hdg ?? before.hdg,
});

/**
 * The bytes of `records` (time order, all in `slice`), encoded after `tail` (the slice's stored
 * records, when appending to them) or from the slice's start. Returns the bytes and the state
 * to append after them next.
 */
export function encodeRecords(
  slice: number,
  records: readonly Quantized[],
  tail: EncoderState | null = null,
): { bytes: Uint8Array; state: EncoderState } {
  const out: number[] = [];
  let prev: Prev = tail ?? startOf(slice);
  for (const q of records) {
    if (q.t < prev.t) throw new Error("positions must be encoded in time order");
    const flags = (q.acc !== null ? ACC : 0) | (q.spd !== null ? SPD : 0) | (q.hdg !== null ? HDG : 0);
    out.push(flags);
    writeVarint(out, q.t - prev.t);
    writeVarint(out, zigzag(q.lat - prev.lat));
    writeVarint(out, zigzag(q.lon - prev.lon));
    if (q.acc !== null) writeVarint(out, zigzag(q.acc - prev.acc));
    if (q.spd !== null) writeVarint(out, zigzag(q.spd - prev.spd));
    if (q.hdg !== null) writeVarint(out, zigzag(q.hdg - prev.hdg));
    prev = prevOf(q, prev);
  }
  return { bytes: Uint8Array.from(out), state: prev };
}

/** What appending to a slice needs of its stored records (plain data: kept in the object's storage). */
export type EncoderState = Prev;

/** The records of a slice's blob, in time order, and the state to append after them. */
export function decodeRecords(
  slice: number,
  bytes: Uint8Array,
): { records: Quantized[]; state: EncoderState } {
  const records: Quantized[] = [];
  let prev = startOf(slice);
  let i = 0;
  const read = () => {
    let n = 0;
    let mul = 1;
    for (;;) {
      if (i >= bytes.length) throw new Error("truncated position block");
      const b = bytes[i++];
      n += (b & 127) * mul;
      if (b < 128) return n;
      mul *= 128;
    }
  };
  while (i < bytes.length) {
    const flags = bytes[i++];
    const t = prev.t + read();
    const lat = prev.lat + unzigzag(read());
    const lon = prev.lon + unzigzag(read());
    const acc = flags & ACC ? prev.acc + unzigzag(read()) : null;
    const spd = flags & SPD ? prev.spd + unzigzag(read()) : null;
    const hdg = flags & HDG ? prev.hdg + unzigzag(read()) : null;
    const q = { t, lat, lon, acc, spd, hdg };
    records.push(q);
    prev = prevOf(q, prev);
  }
  return { records, state: prev };
}

/**
 * Thinning (contract §28): of `incoming` (any order), those at least `minGapMs` from every
 * position in `stored` and from each other, kept in time order; a position as close as that to
 * one already kept is dropped (the earlier one stays). `stored` in time order.
 */
export function thin(
  stored: readonly Quantized[],
  incoming: readonly Quantized[],
  minGapMs: number,
): { kept: Quantized[]; dropped: number } {
  const sorted = [...incoming].sort((a, b) => a.t - b.t);
  const times = stored.map((q) => q.t);
  const kept: Quantized[] = [];
  let dropped = 0;
  for (const q of sorted) {
    if (tooClose(times, q.t, minGapMs)) {
      dropped++;
      continue;
    }
    insertSorted(times, q.t);
    kept.push(q);
  }
  return { kept, dropped };
}

/** Index of the first time ≥ t (binary search). */
function lowerBound(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function tooClose(times: readonly number[], t: number, gap: number): boolean {
  const i = lowerBound(times, t);
  return (i < times.length && times[i] - t < gap) || (i > 0 && t - times[i - 1] < gap);
}

function insertSorted(times: number[], t: number) {
  times.splice(lowerBound(times, t), 0, t);
}

/** Two time-ordered lists as one, in time order. */
export function mergeByTime(a: readonly Quantized[], b: readonly Quantized[]): Quantized[] {
  const out: Quantized[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i].t <= b[j].t)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}
