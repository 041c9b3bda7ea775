export function mapStyleProblem(url: string): string | null;
