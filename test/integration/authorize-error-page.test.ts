/**
 * Issue 22: an error at authorise that is answered directly (D4: no redirect back to the app) reaches a
 * holder's browser as the error page, with the same status and code; an API client keeps the JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { pushIssuance } from '../helpers/flows.js';
import { Browser } from '../helpers/rp.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.stop());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('authorise errors: a page for a browser, JSON for an API client', () => {
  it('an error the edge answers (no client_id): 400 page with the code, or JSON', async () => {
    const url = `${t.url}/v2.0/oidc/authorize?response_type=code&scope=openid`;
    const page = await fetch(url, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await page.text();
    expect(html).toContain('This request cannot be completed');
    expect(html).toContain('Error code 400 (invalid_request: client_id is required)');
    expect(html.match(/start again/g)).toHaveLength(1);

    const api = await fetch(url, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(400);
    expect(await api.json()).toEqual({ error: 'invalid_request', error_description: 'client_id is required' });
    const any = await fetch(url);
    expect(any.headers.get('content-type')).toMatch(/json/);
  });

  it('an error the provider answers (a request_uri used twice): the page for the browser', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: '4821',
      redirectUri: REDIRECT,
    });
    expect((await new Browser(REDIRECT).follow(rp.authorizeUrl.href)).res?.status).toBe(200);
    const again = await fetch(rp.authorizeUrl.href, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect(again.status).toBe(400);
    const html = await again.text();
    expect(html).toContain('This request cannot be completed');
    expect(html).toMatch(/Error code 400 \(invalid_request(_uri)?: /);
    const json = await fetch(rp.authorizeUrl.href, { headers: { accept: 'application/json' }, redirect: 'manual' });
    expect((await json.json()).error).toMatch(/^invalid_request/);
  });
});
