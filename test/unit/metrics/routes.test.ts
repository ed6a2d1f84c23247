import { describe, expect, it } from 'vitest';
import { routeNamer, routeOf, statusClass, UNMATCHED } from '../../../src/metrics/routes.js';

/** Issue 21: the `route` label of http_request_duration_seconds is a template, never a raw path. */
describe('routeOf', () => {
  it('names every route the service serves with a template of its own', () => {
    const cases: [string, string][] = [
      ['/v2.0/oidc/par', '/v2.0/oidc/par'],
      ['/v2.0/oidc/authorize', '/v2.0/oidc/authorize'],
      ['/v2.0/oidc/authorize/Zm9vYmFy', '/v2.0/oidc/authorize/:uid'],
      ['/oidc/authorize/abc', '/oidc/authorize/:uid'],
      ['/oidc/authorizev1', '/oidc/authorizev1'],
      ['/v2.0/oidc/token', '/v2.0/oidc/token'],
      ['/.well-known/openid-configuration', '/.well-known/openid-configuration'],
      ['/interaction/v2/uid123', '/interaction/v2/:uid'],
      ['/interaction/v2/uid123/status', '/interaction/v2/:uid/status'],
      ['/interaction/v1/uid123/continue', '/interaction/v1/:uid/continue'],
      ['/interaction/v2/uid123/return', '/interaction/v2/:uid/return'],
      ['/interaction/v2/uid123/identity', '/interaction/v2/:uid/identity'],
      ['/identity/callback', '/identity/callback'],
      ['/wallet/offers/q1w2e3r4t5', '/wallet/offers/:id'],
      ['/wallet/status/7', '/wallet/status/:id'],
      ['/wallet/token', '/wallet/token'],
      ['/wallet/credential', '/wallet/credential'],
      ['/wallet/challenge', '/wallet/challenge'],
      ['/.well-known/openid-credential-issuer/wallet', '/.well-known/openid-credential-issuer/wallet'],
      ['/.well-known/jwt-vc-issuer/wallet', '/.well-known/jwt-vc-issuer/wallet'],
      ['/vp/request/abcDEF_-', '/vp/request/:ref'],
      ['/vp/response', '/vp/response'],
      ['/admin/credentials/5e1c-77/revoke', '/admin/credentials/:serial/revoke'],
      ['/admin/credentials/5e1c-77', '/admin/credentials/:serial'],
      ['/demo', '/demo'],
      ['/demo/pid', '/demo/pid'],
      ['/demo-pid/offers/xyz', '/demo-pid/offers/:id'],
      ['/demo/idv/interaction/abc', '/demo/idv/interaction/:uid'],
      ['/ui/images/Qk3r8xv0aF1sD2pL9mN4bY', '/ui/images/:image'],
      ['/types/EmployeeBadge', '/types/:name'],
      ['/healthz', '/healthz'],
      ['/readyz', '/readyz'],
    ];
    for (const [path, route] of cases) expect(routeOf(path, 200), path).toBe(route);
  });

  it('answers unmatched for a 404 and for any path that is not a route, so no raw path becomes a label', () => {
    expect(routeOf('/wallet/offers/unknown-offer', 404)).toBe(UNMATCHED);
    expect(routeOf('/nothing/here', 404)).toBe(UNMATCHED);
    expect(routeOf('/nothing/here', 400)).toBe(UNMATCHED);
    expect(routeOf('/interaction/v3/uid', 200)).toBe(UNMATCHED);
    expect(routeOf('/interaction/v2/uid/status/more', 200)).toBe(UNMATCHED);
    expect(routeOf('/wallet/offers/a/b', 200)).toBe(UNMATCHED);
    expect(routeOf('/other-wallet/token', 200)).toBe(UNMATCHED);
  });

  it('keeps the route of a known path for other statuses (405, 5xx)', () => {
    expect(routeOf('/v2.0/oidc/par', 405)).toBe('/v2.0/oidc/par');
    expect(routeOf('/interaction/v2/u/status', 503)).toBe('/interaction/v2/:uid/status');
  });

  it('names a configured wallet path as it is configured', () => {
    const of = routeNamer(['credentials']);
    expect(of('/credentials/offers/abc', 200)).toBe('/credentials/offers/:id');
    expect(of('/credentials/token', 200)).toBe('/credentials/token');
    expect(of('/.well-known/openid-credential-issuer/credentials', 200)).toBe(
      '/.well-known/openid-credential-issuer/credentials',
    );
    expect(of('/wallet/token', 200)).toBe(UNMATCHED);
  });
});

describe('statusClass', () => {
  it('groups statuses by their first digit', () => {
    expect([200, 201, 204, 302, 303, 400, 401, 404, 429, 500, 503].map(statusClass)).toEqual([
      '2xx',
      '2xx',
      '2xx',
      '3xx',
      '3xx',
      '4xx',
      '4xx',
      '4xx',
      '4xx',
      '5xx',
      '5xx',
    ]);
  });
});
