import type { Middleware } from 'koa';
import { notFound } from './respond.js';

/**
 * How a request path relates to a list of paths: one of them as written (`exact`), another spelling of one
 * (`other`: another case, a trailing slash, ...), or none of them (`unlisted`).
 */
export type Spelling = 'exact' | 'other' | 'unlisted';

/**
 * The forms a router could take `path` for: ASCII (and any other) case folded, repeated slashes as one,
 * trailing slashes gone; as written and percent-decoded. oidc-provider 9's router folds the ASCII case of
 * static segments and retries once without one trailing slash (node_modules/oidc-provider/lib/helpers/router.js);
 * the rest is margin, so that a router normalising a little more is still covered.
 */
export function foldedForms(path: string): string[] {
  const fold = (p: string) =>
    p
      .toUpperCase()
      .replace(/\/{2,}/g, '/')
      .replace(/(.)\/+$/, '$1');
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // not valid percent-encoding: as it is
  }
  const forms = [fold(path)];
  if (decoded !== path) forms.push(fold(decoded));
  return forms;
}

interface Template {
  /** the path as written, split at '/'; null for a `:parameter` segment (any non-empty value) */
  segments: (string | null)[];
  /** the same, folded (foldedForms) */
  folded: (string | null)[];
}

const splitTemplate = (path: string): Template => {
  const segments = path.split('/').map((s) => (s.startsWith(':') ? null : s));
  return { segments, folded: segments.map((s) => (s === null ? null : foldedForms(s)[0])) };
};

const fits = (parts: string[], template: (string | null)[]) =>
  parts.length === template.length && template.every((s, i) => (s === null ? parts[i] !== '' : s === parts[i]));

/**
 * The spelling of a request path against `paths` (each exact, or with `:parameter` segments as oidc-provider
 * writes its routes). A path listed without parameters is found with one set lookup: the hot path of PAR
 * and token requests.
 */
export function spellingOf(paths: readonly string[]): (path: string) => Spelling {
  const plain = new Set(paths.filter((p) => !p.includes('/:')));
  const foldedPlain = new Set([...plain].map((p) => foldedForms(p)[0]));
  const templates = paths.filter((p) => p.includes('/:')).map(splitTemplate);
  return (path) => {
    if (plain.has(path)) return 'exact';
    const parts = path.split('/');
    if (templates.some((t) => fits(parts, t.segments))) return 'exact';
    const forms = foldedForms(path);
    const other = forms.some((form) => foldedPlain.has(form) || templates.some((t) => fits(form.split('/'), t.folded)));
    return other ? 'other' : 'unlisted';
  };
}

/**
 * The service's routes are exact, and so is every control in front of an oidc-provider instance (rate
 * limits, the wallet's token edge, the version edges), while oidc-provider's router takes other spellings
 * of its routes too (another case, a trailing slash). So every other spelling of a path in `paths` (the
 * providers' routes and what the service serves beside them under their mounts) is answered here, once,
 * with the service's 404 for a path it does not serve, before any control or provider sees it
 * (docs/decisions.md, "Exact paths in front of the providers").
 */
export function exactPaths(paths: readonly string[]): Middleware {
  const spelling = spellingOf(paths);
  return function exactPathsOnly(ctx, next) {
    if (spelling(ctx.path) !== 'other') return next();
    notFound(ctx);
    return Promise.resolve();
  };
}
