/**
 * Where a wallet-facing issuer's endpoints are, under its path (`/wallet`): oidc-provider's routes, set as
 * its `routes` configuration (the documented defaults, written out here so that the list below is the
 * configuration), and the routes the provider always has beside them.
 */
export const WALLET_ROUTES = {
  authorization: '/auth',
  token: '/token',
  credential: '/credential',
  // OpenID4VCI 1.0 §7: the nonce endpoint (and the attestation challenge, when wallet attestations are on)
  challenge: '/challenge',
  jwks: '/jwks',
  end_session: '/session/end',
} as const;

/** The notification endpoint's path under the credential issuer identifier (OpenID4VCI 1.0 §11). */
export const NOTIFICATION_PATH = 'notification';

/** Every path oidc-provider routes for the wallet provider, relative to its mount (`:uid` a segment). */
const PROVIDER_PATHS = [
  ...Object.values(WALLET_ROUTES),
  `${WALLET_ROUTES.authorization}/:uid`,
  `${WALLET_ROUTES.end_session}/confirm`,
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-credential-issuer',
];

/**
 * Every path a wallet-facing issuer at `/<path>` serves, as written: the provider's routes under its mount,
 * and the service's own beside them (offers by reference, status lists, the notification endpoint, the
 * metadata at the RFC 8414 / OpenID4VCI / SD-JWT VC well-known locations). Other spellings of these are
 * refused at the service's edge (src/http/exactPaths.ts).
 */
export function walletIssuerPaths(path: string): string[] {
  return [
    ...PROVIDER_PATHS.map((p) => `/${path}${p}`),
    `/${path}/offers/:id`,
    `/${path}/status/:id`,
    `/${path}/${NOTIFICATION_PATH}`,
    `/.well-known/openid-credential-issuer/${path}`,
    `/.well-known/oauth-authorization-server/${path}`,
    `/.well-known/jwt-vc-issuer/${path}`,
  ];
}
