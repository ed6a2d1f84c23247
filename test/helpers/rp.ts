import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';

/** An id_token_hint as a relying party makes one (the spec's sample: HS256 with the client secret). */
export async function makeHint(opts: {
  clientId: string;
  secret: string;
  audience: string;
  claims: Record<string, unknown>;
  expiresIn?: number;
  alg?: string;
  jti?: string;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...opts.claims })
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(opts.clientId)
    .setAudience(opts.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (opts.expiresIn ?? 300))
    .setJti(opts.jti ?? randomBytes(12).toString('base64url'))
    .sign(new TextEncoder().encode(opts.secret));
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function form(params: Record<string, string | undefined>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) out.set(k, v);
  return out;
}

export async function postForm(
  url: string,
  params: Record<string, string | undefined> | URLSearchParams | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const body = typeof params === 'string' || params instanceof URLSearchParams ? params : form(params);
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * A user agent that keeps cookies and follows redirects by hand, stopping at the relying party's
 * redirect URI (which the tests never serve) or at a page.
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly stopAt: string) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** `accept`: what the request prefers (a browser's HTML by default; JSON to read direct errors as an API client does) */
  async get(url: string, accept = 'text/html'): Promise<Response> {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), accept },
    });
    this.remember(res);
    return res;
  }

  /** Follows redirects until the relying party's redirect URI (returned) or a non-redirect answer. */
  async follow(url: string, max = 10): Promise<{ final: string; res?: Response; html?: string }> {
    let current = url;
    for (let i = 0; i < max; i++) {
      if (current.startsWith(this.stopAt)) return { final: current };
      const res = await this.get(current);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, current).href;
        continue;
      }
      return { final: current, res, html: await res.text() };
    }
    throw new Error('too many redirects');
  }
}

/** The wallet link on the prompt page (the same-device button's href), unescaped. */
export function offerFromPage(html: string): string {
  const m = /href="((?:openid-credential-offer|openid4vp|haip)[^"]+)"/.exec(html);
  if (!m) throw new Error('no wallet link on the page');
  return m[1]
    .replaceAll('&amp;', '&')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>');
}

/** The Credential Offer behind a wallet link, by value or by reference (OpenID4VCI 1.0 §4.1). */
export async function resolveOfferLink(link: string): Promise<any> {
  const params = new URL(link).searchParams;
  const byValue = params.get('credential_offer');
  if (byValue) return JSON.parse(byValue);
  const res = await fetch(params.get('credential_offer_uri')!);
  if (res.status !== 200) throw new Error(`credential_offer_uri answered ${res.status}`);
  return res.json();
}
