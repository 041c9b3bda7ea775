/** A route optimization to solve (fd-route-optimizations queue): the row holds everything else. */
export type OptimizationMessage = { accountId: string; optimizationId: string; baseUrl: string };
