/**
 * The basemap mode of the map (contract §26), loaded only when the operator set a map style
 * (`MAP_STYLE_URL`, named in the page's `<meta name="map-style">`) and the map is first shown:
 * MapLibre GL JS, with the `pmtiles://` protocol so a style can read one PMTiles file (from R2)
 * by HTTP range requests. The same markers by state and route lines as the plain map, as GeoJSON
 * layers; a click on a marker selects its task.
 */
import * as maplibregl from "maplibre-gl";
import "maplibre-gl/dist/maplibre-gl.css";
// The worker as a file of our own origin (worker-src 'self'), named by its hash like the rest.
import workerUrl from "maplibre-gl/dist/maplibre-gl-worker.mjs?url";
import { Protocol } from "pmtiles";

export type MapData = {
  points: { id: string; name: string; state: string; lon: number; lat: number }[];
  lines: { lane: string; coords: [number, number][] }[];
  selected: string | null;
  /** On-duty workers with a position (contract §30): named buttons, as HTML markers. */
  workers: { url: string; name: string; lon: number; lat: number }[];
};

const STATE_COLOURS = [
  "match",
  ["get", "state"],
  "assigned",
  "#0b57d0",
  "accepted",
  "#6f42c1",
  "transit",
  "#e37400",
  "active",
  "#c2185b",
  "completed",
  "#1e8e3e",
  "failed",
  "#b3261e",
  "cancelled",
  "#444444",
  "#8a8a8a",
] as unknown as maplibregl.ExpressionSpecification;

let protocolAdded = false;

export function createBasemap(
  container: HTMLElement,
  style: string,
  onSelect: (id: string) => void,
  onWorker: (url: string) => void,
) {
  if (!protocolAdded) {
    maplibregl.setWorkerUrl(workerUrl);
    maplibregl.addProtocol("pmtiles", new Protocol().tile);
    protocolAdded = true;
  }
  const map = new maplibregl.Map({ container, style, attributionControl: { compact: true } });
  let ready = false;
  let pending: MapData | null = null;
  let fitted = false;

  const points = (d: MapData): maplibregl.GeoJSONSourceSpecification["data"] => ({
    type: "FeatureCollection",
    features: d.points.map((p) => ({
      type: "Feature",
      id: p.id,
      properties: { id: p.id, name: p.name, state: p.state, selected: p.id === d.selected },
      geometry: { type: "Point", coordinates: [p.lon, p.lat] },
    })),
  });
  const lines = (d: MapData): maplibregl.GeoJSONSourceSpecification["data"] => ({
    type: "FeatureCollection",
    features: d.lines.map((l) => ({
      type: "Feature",
      properties: { lane: l.lane },
      geometry: { type: "LineString", coordinates: l.coords },
    })),
  });

  const pins = new Map<string, maplibregl.Marker>();
  function applyWorkers(d: MapData) {
    const seen = new Set<string>();
    for (const w of d.workers) {
      seen.add(w.url);
      let m = pins.get(w.url);
      if (!m) {
        const el = document.createElement("button");
        el.type = "button";
        el.className = "worker-pin";
        el.textContent = w.name;
        el.dataset.worker = w.url;
        el.addEventListener("click", () => onWorker(w.url));
        m = new maplibregl.Marker({ element: el }).setLngLat([w.lon, w.lat]).addTo(map);
        pins.set(w.url, m);
      } else m.setLngLat([w.lon, w.lat]);
    }
    for (const [url, m] of pins)
      if (!seen.has(url)) {
        m.remove();
        pins.delete(url);
      }
  }

  let drawn: MapData | null = null;
  function apply(d: MapData) {
    applyWorkers(d);
    // Positions come many times a second; the tasks' sources are set again only when they changed.
    if (!drawn || drawn.points !== d.points || drawn.selected !== d.selected)
      (map.getSource("tasks") as maplibregl.GeoJSONSource).setData(points(d));
    if (!drawn || drawn.lines !== d.lines)
      (map.getSource("routes") as maplibregl.GeoJSONSource).setData(lines(d));
    drawn = d;
    if (!fitted && d.points.length) {
      const b = new maplibregl.LngLatBounds();
      for (const p of d.points) b.extend([p.lon, p.lat]);
      map.fitBounds(b, { padding: 30, animate: false });
      fitted = true;
    }
  }

  map.on("load", () => {
    map.addSource("routes", { type: "geojson", data: { type: "FeatureCollection", features: [] } });
    map.addSource("tasks", { type: "geojson", data: { type: "FeatureCollection", features: [] } });
    map.addLayer({
      id: "routes",
      type: "line",
      source: "routes",
      paint: { "line-color": "#0b57d0", "line-width": 2, "line-opacity": 0.7 },
    });
    map.addLayer({
      id: "tasks",
      type: "circle",
      source: "tasks",
      paint: {
        "circle-color": STATE_COLOURS,
        "circle-radius": ["case", ["get", "selected"], 9, 5],
        "circle-stroke-color": ["case", ["get", "selected"], "#000000", "#ffffff"],
        "circle-stroke-width": ["case", ["get", "selected"], 3, 1.5],
      },
    });
    map.on("click", "tasks", (e: maplibregl.MapLayerMouseEvent) => {
      const id = e.features?.[0]?.properties?.id;
      if (typeof id === "string") onSelect(id);
    });
    ready = true;
    if (pending) apply(pending);
  });

  return {
    update(d: MapData) {
      pending = d;
      if (ready) apply(d);
    },
    destroy() {
      map.remove();
    },
  };
}
