import * as oidc from 'openid-client';
import { SECRETS } from './service.js';

/** One of the spec's four endpoint sets, as a relying party configures openid-client for it. */
export interface EndpointSet {
  name: string;
  /** the discovery document's path under the base URL */
  discovery: string;
  issuer: (baseUrl: string) => string;
  par: boolean;
  pkce: boolean;
  clientId: string;
  secret: string;
}

/** Version 2 PAR and non-PAR, Version 1 PAR, Version 1 non-PAR (root document, /oidc/authorizev1), with the test config's clients. */
export const ENDPOINT_SETS: EndpointSet[] = [
  {
    name: 'Version 2, PAR',
    discovery: '/v2.0/.well-known/openid-configuration',
    issuer: (u) => u,
    par: true,
    pkce: true,
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
  },
  {
    name: 'Version 2, without PAR',
    discovery: '/v2.0/.well-known/openid-configuration',
    issuer: (u) => u,
    par: false,
    pkce: true,
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
  },
  {
    name: 'Version 1, PAR',
    discovery: '/oidc/.well-known/openid-configuration',
    issuer: (u) => `${u}/oidc`,
    par: true,
    pkce: false,
    clientId: 'other',
    secret: SECRETS.other,
  },
  {
    name: 'Version 1, without PAR (/oidc/authorizev1)',
    discovery: '/.well-known/openid-configuration',
    issuer: (u) => `${u}/oidc`,
    par: false,
    pkce: true,
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
  },
];

/** openid-client, unmodified, discovering the service for one endpoint set (http on loopback). */
export function discoverRp(baseUrl: string, c: EndpointSet): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(`${baseUrl}${c.discovery}`), c.clientId, c.secret, oidc.ClientSecretPost(c.secret), {
    execute: [oidc.allowInsecureRequests],
  });
}
