import { jwtVerify, type JWTPayload } from 'jose';
import type { ClientConfig, Config } from '../config/schema.js';
import { endpointsOf, profileOf, type DemoState } from './flow.js';
import type { DemoDeps } from './deps.js';

export type Redeemed = { claims: JWTPayload } | { title: string; details: unknown };

export type RedeemDeps = Pick<DemoDeps, 'profiles' | 'callback' | 'idTokenKeys'> & {
  config: Pick<Config, 'baseUrl'>;
  client: ClientConfig;
};

/** The code exchange at the token endpoint, and the ID token's signature, issuer, audience and nonce. */
export async function redeem(d: RedeemDeps, saved: DemoState, code: string): Promise<Redeemed> {
  const profile = profileOf(d.profiles, saved.mode);
  const res = await fetch(endpointsOf(d.profiles, d.config.baseUrl, saved.mode).token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: d.callback,
      client_id: d.client.clientId,
      client_secret: d.client.clientSecret,
      ...(saved.verifier ? { code_verifier: saved.verifier } : {}),
    }),
  });
  const token = (await res.json()) as { id_token?: string };
  if (!token.id_token) return { title: 'The token request failed', details: token };
  const { payload } = await jwtVerify(token.id_token, d.idTokenKeys, {
    issuer: profile.issuer,
    audience: d.client.clientId,
  });
  if (payload.nonce !== saved.nonce) return { title: 'nonce mismatch', details: {} };
  return { claims: payload };
}
