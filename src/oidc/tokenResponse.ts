import type { ClientConfig } from '../config/schema.js';
import type { VersionProfile } from './versions.js';

/**
 * The token response of the spec (D3): `access_token` is the ID token itself (one signature per
 * response), `token_type` Bearer, `expires_in` a number (a string of digits for clients flagged for the
 * spec's sample), `scope` as the client asked for it (an issuance scope without `openid` where the
 * version forbids it), and for Version 1 non-PAR flows the request's `state` (D3).
 */
export function shapeTokenResponse(
  body: Record<string, unknown>,
  o: { client: ClientConfig; profile: VersionProfile; extras?: Record<string, string> },
): void {
  body.access_token = body.id_token;
  body.token_type = 'Bearer';
  delete body.refresh_token;
  if (typeof body.expires_in === 'number' && o.client.expiresInAsString) body.expires_in = String(body.expires_in);
  if (o.profile.issuanceOpenid === 'forbidden' && typeof body.scope === 'string') {
    const scopes = body.scope.split(' ');
    if (scopes.some((s) => s.startsWith('issue.'))) body.scope = scopes.filter((s) => s !== 'openid').join(' ');
  }
  if (o.extras) Object.assign(body, o.extras);
}
