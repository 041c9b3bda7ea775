/**
 * The route-optimization problem and its answer (contract §16), as plain data: no I/O, no
 * clock, no randomness but the seeded one. Times and distances are numbers in the units of
 * the matrices (the service uses seconds and metres; Solomon's instances use one unit for both).
 */

export type Objective = "distance" | "duration" | "balance";

export type Vehicle = {
  id: string;
  /** Location index where the route starts; undefined: at its first stop (no leg to it). */
  start?: number;
  /** Location index where the route ends; undefined: at its last stop. */
  end?: number;
  /** When the route may leave its start (re-planning from now: the later of now and the shift's start). */
  shiftStart: number;
  shiftEnd: number;
  /** Up to 3 dimensions; empty = unlimited. */
  capacity: number[];
  /**
   * Ids of jobs (standalone visits, not shipments) this route starts with, in this order: stops
   * under way when re-planning from now. The search never removes, moves or puts anything
   * before them; their windows' ends and the shift's end do not rule them out (they are served
   * where they stand), what comes after them must fit.
   */
  fixed?: string[];
};

export type Job = {
  id: string;
  location: number;
  /** Service duration at the stop. */
  service: number;
  /** [earliest start, latest start]; undefined: any time in the shift. */
  timeWindow?: [number, number];
  /** Per capacity dimension; missing dimensions are 0. */
  demand: number[];
  /**
   * The only vehicle (its id) this job may go on; its place on that route may change (a task
   * that keeps its assignee). A shipment's pick-up and drop-off name the same vehicle or none.
   */
  vehicle?: string;
};

/** A pick-up and its drop-off: same vehicle, pick-up first; the demand rides between them. */
export type Shipment = { pickup: Job; delivery: Job; demand: number[] };

export type Instance = {
  /** Row-major `locations × locations` travel distances and durations; non-finite = no path. */
  distances: ArrayLike<number>;
  durations: ArrayLike<number>;
  locations: number;
  vehicles: Vehicle[];
  jobs: Job[];
  shipments?: Shipment[];
  objective?: Objective;
};

export type SolveOptions = {
  /** Seed of the PRNG: the same instance, seed and budget give the same solution. */
  seed?: number;
  /** Ruin-and-recreate iterations (the budget; a Worker's clock does not advance while it computes). */
  iterations?: number;
  /** Jobs removed per ruin, on average (SISR's c̄). */
  averageRemoved?: number;
  /** Longest string removed (SISR's L_max). */
  maxStringLength?: number;
  /**
   * The probability that a ruin takes a split string from a route rather than a string (SISR's
   * §4.1; default 0.5, DEFAULT_SPLIT). Internal: for tuning.
   */
  splitRate?: number;
  /**
   * The probability that the recreate skips a position that would win (SISR's blinks, §4.2;
   * default 0.01, DEFAULT_BLINK). Internal: for tuning.
   */
  blinkRate?: number;
  /**
   * The weights of the recreate's orders of reinsertion (§4.2): random, larger demand first,
   * farther from the first vehicle's start first, closer first (default 4, 4, 2, 1,
   * DEFAULT_RECREATE_ORDERS; not all 0). Internal: for tuning.
   */
  recreateOrders?: readonly [number, number, number, number];
  /** Start and final annealing temperatures in Solomon's units (default 30 and 0.5), scaled to the instance. */
  temperatures?: [number, number];
  /** The share of iterations that first remove a whole route and may not open a vehicle. */
  routeRemoval?: number;
  /**
   * 2-opt* tail exchanges (standalone visits only): before each ruin and recreate, the best tail
   * exchange between routes around a random stop, when one shortens them, repeated while a draw
   * falls below this probability (0: none; default 0.5, one on average). Not counted as iterations.
   */
  tailExchange?: number;
  /**
   * Fleet minimisation (standalone visits only): the share of the budget spent first on finding
   * the smallest fleet that serves every job (SISR's procedure); the annealing starts from it.
   * 0: none; default 0.2 (DEFAULT_FLEET_MINIMISATION), where routes are short (`fleetMaxStops`).
   */
  fleetMinimisation?: number;
  /** The fleet phase runs only when the construction's routes hold this many jobs on average at most (default 20). */
  fleetMaxStops?: number;
  /**
   * Penalised time windows ("time warp", Vidal et al. 2013; src/solver/warp.ts) in the fleet
   * phase: its recreate may break windows at a cost, and a fleet counts once none is broken (the
   * best solution kept is always feasible). 0: off (windows hard throughout); default 1 (on).
   */
  timeWarp?: number;
  /** The weight of a unit of time warp in the fleet phase (default 10), in cost per unit of time. */
  timeWarpFleetWeight?: number;
  /** Granular recreate: a job is tried in the routes of this many of its nearest neighbours first (0: in every route). */
  neighbourhood?: number;
  /**
   * Where the fleet phase runs (short routes), the search after the construction tries a job in
   * the routes of this share of the jobs nearest it when that is more than 30 (default 0.08,
   * SHORT_ROUTE_NEIGHBOURHOOD_SHARE; 0: 30). `neighbourhood`, when given, applies everywhere.
   */
  shortRouteNeighbourhood?: number;
  /**
   * Renumber the locations in a nearest-neighbour order, the instance's matrices permuted in
   * place for the solve and put back before it returns (model.ts, `relabel`): the same search,
   * faster where the matrix outgrows the cache, no memory beyond two rows. Default true; done
   * for instances of RELABEL_FROM locations or more. false: never (the same solutions, for
   * comparisons). The matrices must not be read elsewhere while `solve` runs.
   */
  relabel?: boolean;
  /**
   * A benchmark's clock, never the Worker's: the fraction of the time budget spent so far, read
   * every few hundred iterations; the run ends when it reaches 1 (or when `iterations` run out)
   * and the annealing schedule follows it instead of the iteration count.
   */
  progress?: () => number;
};

export type UnassignedReason = "unreachable" | "capacity" | "time_window" | "shift";

export type Stop = {
  job: string;
  arrival: number;
  start: number;
  departure: number;
  /** Of the leg that reaches this stop. */
  distance: number;
  duration: number;
};

export type RouteSolution = {
  vehicle: string;
  stops: Stop[];
  /** Including the leg to the end location. */
  distance: number;
  duration: number;
};

export type Solution = {
  routes: RouteSolution[];
  unassigned: { job: string; reason: UnassignedReason }[];
  distance: number;
  duration: number;
  /** What the search did: iterations run and the cost of the initial construction and of the result. */
  stats: {
    iterations: number;
    initialCost: number;
    cost: number;
    /**
     * With fleet minimisation: the smallest fleet it found serving every job (null: none), its
     * cost (`distance`: the distance, or the duration under that objective), the phase's
     * iterations, and the iteration that found that fleet.
     */
    fleet?: { routes: number | null; iterations: number; distance: number | null; lastFleet: number };
  };
};
