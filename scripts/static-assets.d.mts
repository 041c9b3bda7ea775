export const FONT_FILES: Record<string, string>;
export function copyDocsAssets(): string;
export function copyFontAssets(): string;
export function copyStaticAssets(): { swaggerUi: string; notoSans: string };
export function buildWebApps(): Promise<void>;
export function ensureWebApps(): Promise<void>;
