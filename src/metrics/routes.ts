/**
 * The `route` label of `http_request_duration_seconds`: a template for every path the service serves
 * (src/app.ts and what it mounts), never a raw path, so that the label has a few dozen values at most and
 * carries no identifier (an offer's or a request object's reference is a bearer value). A path that
 * answered 404, or that is not one of the service's routes, is `unmatched`.
 */
export const UNMATCHED = 'unmatched';

/** The relying parties' side, both versions (src/oidc/versions.ts, src/oidc/edge.ts), and the service's own. */
const FIXED = [
  '/',
  '/healthz',
  '/readyz',
  // Version 2
  '/v2.0/.well-known/openid-configuration',
  '/v2.0/.well-known/openid-configuration/jwks',
  '/v2.0/oidc/par',
  '/v2.0/oidc/authorize',
  '/v2.0/oidc/token',
  '/v2.0/oidc/userinfo',
  // Version 1
  '/.well-known/openid-configuration',
  '/.well-known/openid-configuration/jwks',
  '/oidc/.well-known/openid-configuration',
  '/oidc/.well-known/openid-configuration/jwks',
  '/oidc/par',
  '/oidc/authorize',
  '/oidc/authorizev1',
  '/oidc/token',
  '/oidc/userinfo',
  // the wallet-facing verifier (src/verification/verifier.ts) and the identity provider's answer (D12)
  '/vp/response',
  '/identity/callback',
  // the demo (config demo: true; src/demo)
  '/demo',
  '/demo/start',
  '/demo/callback',
  '/demo/external',
  '/demo/webhook',
  '/demo/credential-status',
  '/demo/pid',
  '/demo/idv/.well-known/openid-configuration',
  '/demo/idv/auth',
  '/demo/idv/token',
  '/demo/idv/jwks',
  '/demo/idv/me',
];

/** What a wallet-facing issuer serves under its path (src/issuance: oidc-provider's openid4vci routes, offers, status lists, metadata). */
const ISSUER_FIXED = [
  '/token',
  '/credential',
  '/challenge',
  '/jwks',
  '/.well-known/openid-credential-issuer',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
];
const ISSUER_ALIASES = [
  '/.well-known/openid-credential-issuer/',
  '/.well-known/oauth-authorization-server/',
  '/.well-known/jwt-vc-issuer/',
];

type Pattern = readonly [RegExp, (m: RegExpExecArray) => string];

const SEGMENT = '[^/]+';
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Paths with an identifier in them, and their template. */
const PATTERNS: Pattern[] = [
  [
    new RegExp(`^/interaction/(v1|v2)/${SEGMENT}(/status|/continue|/return|/identity|/dc-api)?$`),
    (m) => `/interaction/${m[1]}/:uid${m[2] ?? ''}`,
  ],
  // the provider's resume step after the prompt
  [new RegExp(`^/(v2\\.0/oidc|oidc)/authorize/${SEGMENT}$`), (m) => `/${m[1]}/authorize/:uid`],
  [new RegExp(`^/vp/request/${SEGMENT}$`), () => '/vp/request/:ref'],
  [
    new RegExp(`^/admin/credentials/${SEGMENT}(/revoke|/suspend|/reinstate)?$`),
    (m) => `/admin/credentials/:serial${m[1] ?? ''}`,
  ],
  [new RegExp(`^/demo/idv/(interaction|auth)/${SEGMENT}$`), (m) => `/demo/idv/${m[1]}/:uid`],
  // the logos the holder pages show (src/ui/images.ts), named by their content
  [new RegExp(`^/ui/images/${SEGMENT}$`), () => '/ui/images/:image'],
  // SD-JWT VC Type Metadata at a type's default vct (src/issuance/typeMetadata.ts)
  [new RegExp(`^/types/${SEGMENT}$`), () => '/types/:name'],
];

/**
 * `routeOf` for a deployment: `issuerPaths` are the wallet-facing issuers' paths (config `walletPath`,
 * and the demo's PID issuer), whose routes are named with the path as it is configured.
 */
export function routeNamer(issuerPaths: readonly string[] = ['wallet']): (path: string, status: number) => string {
  const fixed = new Set(FIXED);
  const patterns = [...PATTERNS];
  for (const p of issuerPaths) {
    for (const route of ISSUER_FIXED) fixed.add(`/${p}${route}`);
    for (const alias of ISSUER_ALIASES) fixed.add(`${alias}${p}`);
    const base = escape(p);
    patterns.push([new RegExp(`^/${base}/(offers|status)/${SEGMENT}$`), (m) => `/${p}/${m[1]}/:id`]);
  }
  return (path, status) => {
    if (status === 404) return UNMATCHED;
    if (fixed.has(path)) return path;
    for (const [pattern, name] of patterns) {
      const m = pattern.exec(path);
      if (m) return name(m);
    }
    return UNMATCHED;
  };
}

/** The route template of `path` (as the service sees it, under its base URL) that answered `status`. */
export const routeOf: (path: string, status: number) => string = routeNamer(['wallet', 'demo-pid']);

/** `2xx` .. `5xx` (`1xx` never reaches the histogram: Koa answers with a final status). */
export function statusClass(status: number): string {
  return status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';
}
