/**
 * A route map from coordinates alone (no tiles, no third-party script): each route's legs as a
 * line in its colour, its stops numbered in order, its start and end addresses marked. Pure:
 * points in, a geometry in the map's own coordinates (origin top-left, y down) out, which the
 * HTML report draws as inline SVG and the PDF as vector paths, so both show the same map.
 *
 * Projection: spherical Web Mercator (EPSG:3857's formulas on a unit sphere), fitted to the
 * points' bounding box with the same scale on both axes, so shapes and bearings look as on any
 * web map. A city or a region fits; latitudes are clamped to ±85°, as Web Mercator does.
 *
 * Labels: a stop's number sits in a disc on the stop. Where that disc would cover another
 * label, it is moved to one of eight places around the stop, with a leader line; where none is
 * free, the stop keeps a dot without a number (the table beside the map lists every stop).
 * So no two labels overlap, however dense the stops.
 */

export type LonLat = readonly [lon: number, lat: number];
export type MapRouteInput = {
  color: string;
  start: LonLat | null;
  end: LonLat | null;
  /** In visiting order; `n` is the number the report gives the stop; null: no location. */
  stops: { n: number; at: LonLat | null }[];
};
export type MapLabel = { x: number; y: number; r: number; text: string };
export type MapStop = { n: number; x: number; y: number; label: MapLabel | null };
export type MapDepot = { x: number; y: number; kind: "start" | "end" | "start-end" };
export type MapRoute = { color: string; path: [number, number][]; stops: MapStop[]; depots: MapDepot[] };
export type RouteMap = { width: number; height: number; routes: MapRoute[]; labelSize: number };

/** One colour per route, dark enough for white numbers on it and apart from each other. */
export const ROUTE_COLORS = [
  "#1565c0",
  "#c62828",
  "#2e7d32",
  "#6a1b9a",
  "#e65100",
  "#00838f",
  "#ad1457",
  "#4e342e",
  "#558b2f",
  "#283593",
] as const;
export const routeColor = (i: number) => ROUTE_COLORS[i % ROUTE_COLORS.length];

export type MapOptions = {
  width: number;
  height: number;
  /** Font size of the stop numbers. */
  labelSize: number;
  /** The width of a label's text at `labelSize`, and its line height (ascent + descent). */
  labelWidth: (text: string) => number;
  labelHeight: number;
  /** Half the side of a depot's square marker: labels keep off it. */
  depotHalf: number;
};

const MAX_LAT = 85;
const project = ([lon, lat]: LonLat): [number, number] => {
  const phi = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  return [(lon * Math.PI) / 180, -Math.log(Math.tan(Math.PI / 4 + phi / 2))];
};
/** The smallest span the map shows (radians of longitude, about 1 km at the equator): one point is not magnified without end. */
const MIN_SPAN = 1.6e-4;

export function fitRouteMap(routes: MapRouteInput[], o: MapOptions): RouteMap | null {
  const points = routes
    .flatMap((r) => [r.start, r.end, ...r.stops.map((s) => s.at)])
    .filter((p) => p !== null);
  if (!points.length) return null;
  const projected = points.map(project);
  const xs = projected.map((p) => p[0]);
  const ys = projected.map((p) => p[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const baseR = Math.max(o.labelSize * 0.8, Math.hypot(o.labelWidth("8"), o.labelHeight) / 2);
  const pad = baseR * 2 + 4;
  const spanX = Math.max(maxX - minX, MIN_SPAN);
  const spanY = Math.max(maxY - minY, MIN_SPAN);
  const scale = Math.min((o.width - 2 * pad) / spanX, (o.height - 2 * pad) / spanY);
  const cx = (minX + maxX) / 2;
  const cy = (minY + maxY) / 2;
  const toMap = (p: LonLat): [number, number] => {
    const [x, y] = project(p);
    return [o.width / 2 + (x - cx) * scale, o.height / 2 + (y - cy) * scale];
  };

  // Discs already taken: the labels placed so far, and the depots' markers (as their circumcircle).
  const placed: { x: number; y: number; r: number }[] = [];
  const free = (l: MapLabel) =>
    l.x - l.r >= 0 &&
    l.y - l.r >= 0 &&
    l.x + l.r <= o.width &&
    l.y + l.r <= o.height &&
    placed.every((p) => Math.hypot(p.x - l.x, p.y - l.y) >= p.r + l.r + 0.5);
  const place = (x: number, y: number, text: string): MapLabel | null => {
    // The disc holds the number's whole line box: its half-diagonal, at least the base radius.
    const r = Math.max(baseR, Math.hypot(o.labelWidth(text), o.labelHeight) / 2);
    const candidates: [number, number][] = [[0, 0]];
    for (let k = 0; k < 8; k++) {
      const a = (k * Math.PI) / 4 - Math.PI / 4;
      candidates.push([Math.cos(a) * r * 2.4, Math.sin(a) * r * 2.4]);
    }
    for (const [dx, dy] of candidates) {
      const label = { x: x + dx, y: y + dy, r, text };
      if (free(label)) {
        placed.push(label);
        return label;
      }
    }
    return null;
  };

  const out: MapRoute[] = routes.map((r) => {
    const start = r.start ? toMap(r.start) : null;
    const end = r.end ? toMap(r.end) : null;
    const stops = r.stops.flatMap((s) => (s.at ? [{ n: s.n, at: toMap(s.at) }] : []));
    const path = [...(start ? [start] : []), ...stops.map((s) => s.at), ...(end ? [end] : [])];
    const depots: MapDepot[] = [];
    if (start && end && Math.hypot(start[0] - end[0], start[1] - end[1]) < 1)
      depots.push({ x: start[0], y: start[1], kind: "start-end" });
    else {
      if (start) depots.push({ x: start[0], y: start[1], kind: "start" });
      if (end) depots.push({ x: end[0], y: end[1], kind: "end" });
    }
    return {
      color: r.color,
      path,
      depots,
      stops: stops.map((s) => ({ n: s.n, x: s.at[0], y: s.at[1], label: null })),
    };
  });
  for (const r of out) for (const d of r.depots) placed.push({ x: d.x, y: d.y, r: o.depotHalf * Math.SQRT2 });
  // Labels in visiting order, route by route: the first stops of each route get the best places.
  for (const r of out) for (const s of r.stops) s.label = place(s.x, s.y, String(s.n));
  return { width: o.width, height: o.height, routes: out, labelSize: o.labelSize };
}

/** The map as an inline SVG element (scales with its container: `viewBox`, width 100%). */
export function routeMapSvg(
  map: RouteMap,
  title: string,
  depotLabel: (kind: MapDepot["kind"]) => string,
  depotHalf: number,
): string {
  const f = (n: number) => n.toFixed(1);
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  const parts: string[] = [];
  parts.push(`<rect width="${f(map.width)}" height="${f(map.height)}" fill="#f7f7f5"/>`);
  for (const r of map.routes) {
    if (r.path.length > 1)
      parts.push(
        `<polyline points="${r.path.map(([x, y]) => `${f(x)},${f(y)}`).join(" ")}" fill="none" stroke="${r.color}" stroke-width="2" stroke-linejoin="round" stroke-opacity="0.85"/>`,
      );
  }
  for (const r of map.routes)
    for (const s of r.stops) parts.push(`<circle cx="${f(s.x)}" cy="${f(s.y)}" r="2.5" fill="${r.color}"/>`);
  for (const r of map.routes) {
    for (const d of r.depots)
      parts.push(
        `<rect x="${f(d.x - depotHalf)}" y="${f(d.y - depotHalf)}" width="${f(2 * depotHalf)}" height="${f(2 * depotHalf)}" fill="#fff" stroke="${r.color}" stroke-width="2.5"><title>${esc(depotLabel(d.kind))}</title></rect>`,
      );
  }
  for (const r of map.routes) {
    for (const s of r.stops) {
      const l = s.label;
      if (!l) continue;
      if (l.x !== s.x || l.y !== s.y)
        parts.push(
          `<line x1="${f(s.x)}" y1="${f(s.y)}" x2="${f(l.x)}" y2="${f(l.y)}" stroke="${r.color}" stroke-width="1"/>`,
        );
      parts.push(
        `<circle cx="${f(l.x)}" cy="${f(l.y)}" r="${f(l.r)}" fill="${r.color}" stroke="#fff" stroke-width="1"/><text x="${f(l.x)}" y="${f(l.y)}" fill="#fff" font-size="${map.labelSize}" font-weight="600" text-anchor="middle" dominant-baseline="central">${l.text}</text>`,
      );
    }
  }
  return `<svg class="map" viewBox="0 0 ${f(map.width)} ${f(map.height)}" role="img" aria-label="${esc(title)}" font-family="system-ui,sans-serif">${parts.join("")}</svg>`;
}
