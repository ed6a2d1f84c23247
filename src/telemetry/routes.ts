import { routeNamer, UNMATCHED } from '../metrics/routes.js';

/**
 * The route template of a request as it arrived (under the base URL's path): the metrics' templates
 * (src/metrics/routes.ts), so that a span's name never holds a raw path with a reference in it.
 */
export function routeTemplates(
  issuerPaths: readonly string[],
  basePath: string,
): (path: string, status: number) => string {
  const routeOf = routeNamer(issuerPaths);
  if (!basePath) return routeOf;
  return (path, status) =>
    path.startsWith(`${basePath}/`)
      ? routeOf(path.slice(basePath.length), status)
      : path === basePath
        ? routeOf('/', status)
        : UNMATCHED;
}
