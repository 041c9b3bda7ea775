/** Copies the pinned Swagger UI files into public/docs/vendor/; returns its version. */
export function copyDocsAssets(): string;
