// The solver's tuning knobs for bench/vrp.mjs and bench/vrp-fixed.mjs, read from the environment
// (unset: the solver's default). VRP_CBAR (c̄), VRP_LMAX (SISR's L_max), VRP_T0 and VRP_TF (the
// annealing's temperatures), VRP_NEAR (the neighbourhood everywhere), VRP_NEAR_SHARE (its share of
// the jobs where the fleet phase runs; 0: 30 throughout, the search before session 8), VRP_ROUTE
// (route removals), VRP_TAILS (tail exchanges), VRP_FLEETMIN and VRP_FLEETSTOPS (the fleet phase),
// VRP_TW (penalised time windows in the fleet phase; 0: off) and VRP_TW_FLEETW, VRP_RELABEL=0 (the
// locations in their own order; the same search), VRP_BLINK (the recreate's blink rate), VRP_SPLIT
// (the probability of a split string rather than a string in a ruin), VRP_ORDERS (four weights,
// comma-separated, of the recreate's orders: random, larger demand first, far first, close first;
// e.g. 4,4,2,1, the default).
const env = process.env;
const num = (name, key) => (env[name] ? { [key]: Number(env[name]) } : {});
/** Four non-negative weights, not all 0 (else the run stops here). */
function orders(text) {
  const w = text.split(",").map(Number);
  if (w.length !== 4 || w.some((x) => !(x >= 0)) || !w.some((x) => x > 0))
    throw new Error(`VRP_ORDERS: four non-negative weights, not all 0 (got ${text})`);
  return w;
}

export const tuning = {
  ...num("VRP_LMAX", "maxStringLength"),
  ...num("VRP_CBAR", "averageRemoved"),
  ...(env.VRP_T0 ? { temperatures: [Number(env.VRP_T0), Number(env.VRP_TF || 1)] } : {}),
  ...num("VRP_NEAR", "neighbourhood"),
  ...num("VRP_ROUTE", "routeRemoval"),
  ...num("VRP_TAILS", "tailExchange"),
  ...num("VRP_FLEETMIN", "fleetMinimisation"),
  ...num("VRP_FLEETSTOPS", "fleetMaxStops"),
  ...num("VRP_TW", "timeWarp"),
  ...num("VRP_NEAR_SHARE", "shortRouteNeighbourhood"),
  ...num("VRP_TW_FLEETW", "timeWarpFleetWeight"),
  ...(env.VRP_RELABEL ? { relabel: env.VRP_RELABEL !== "0" } : {}),
  ...num("VRP_BLINK", "blinkRate"),
  ...num("VRP_SPLIT", "splitRate"),
  ...(env.VRP_ORDERS ? { recreateOrders: orders(env.VRP_ORDERS) } : {}),
};

/** VRP_SEED (default 1). */
export const seed = Number(env.VRP_SEED || 1);
