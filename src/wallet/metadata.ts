import { jsonOrOAuthError, WalletError } from './errors.js';

export interface CredentialIssuerMetadata {
  credential_issuer: string;
  credential_endpoint: string;
  nonce_endpoint?: string;
  authorization_servers?: string[];
  credential_configurations_supported: Record<string, { format?: string; vct?: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  [key: string]: unknown;
}

/**
 * The well-known URL for an identifier with a path: the well-known segment goes between host and path
 * (RFC 8414 §3.1, OpenID4VCI 1.0 §12.2.2), e.g. https://h/.well-known/openid-credential-issuer/wallet.
 */
export function wellKnownUrl(identifier: string, suffix: string): string {
  const url = new URL(identifier);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/${suffix}${path}`;
}

/** The older location some issuers use: the well-known segment appended to the identifier. */
export function appendedWellKnownUrl(identifier: string, suffix: string): string {
  return `${identifier.replace(/\/$/, '')}/.well-known/${suffix}`;
}

/** Tries each location in turn; the first document that loads wins. */
async function firstDocument(urls: string[], what: string, fetchImpl: typeof fetch): Promise<Record<string, unknown>> {
  let lastError: unknown;
  for (const url of urls) {
    try {
      const response = await fetchImpl(url, { headers: { accept: 'application/json' } });
      return await jsonOrOAuthError(response, what);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof WalletError
    ? new WalletError(`${what}: ${lastError.message}`)
    : new WalletError(`${what}: ${String(lastError)}`);
}

/** OpenID4VCI 1.0 §12.2: fetch, then check `credential_issuer` equals the offer's (§12.2.2). */
export async function fetchIssuerMetadata(
  credentialIssuer: string,
  fetchImpl: typeof fetch,
): Promise<CredentialIssuerMetadata> {
  const urls = [
    wellKnownUrl(credentialIssuer, 'openid-credential-issuer'),
    appendedWellKnownUrl(credentialIssuer, 'openid-credential-issuer'),
  ];
  const metadata = await firstDocument(urls, 'fetching the credential issuer metadata', fetchImpl);
  if (metadata.credential_issuer !== credentialIssuer) {
    throw new WalletError(
      `credential issuer metadata names ${String(metadata.credential_issuer)}, not ${credentialIssuer}`,
    );
  }
  if (typeof metadata.credential_endpoint !== 'string')
    throw new WalletError('credential issuer metadata has no credential_endpoint');
  if (
    typeof metadata.credential_configurations_supported !== 'object' ||
    metadata.credential_configurations_supported === null
  ) {
    throw new WalletError('credential issuer metadata has no credential_configurations_supported');
  }
  return metadata as CredentialIssuerMetadata;
}

/** RFC 8414 §3: fetch, then check `issuer` equals the identifier it was fetched for (§3.3). */
export async function fetchAuthorizationServerMetadata(
  issuer: string,
  fetchImpl: typeof fetch,
): Promise<AuthorizationServerMetadata> {
  const urls = [
    wellKnownUrl(issuer, 'oauth-authorization-server'),
    appendedWellKnownUrl(issuer, 'oauth-authorization-server'),
    appendedWellKnownUrl(issuer, 'openid-configuration'),
  ];
  const metadata = await firstDocument(urls, 'fetching the authorization server metadata', fetchImpl);
  if (metadata.issuer !== issuer)
    throw new WalletError(`authorization server metadata names ${String(metadata.issuer)}, not ${issuer}`);
  if (typeof metadata.token_endpoint !== 'string')
    throw new WalletError('authorization server metadata has no token_endpoint');
  return metadata as AuthorizationServerMetadata;
}

/** Which authorization server to ask for the token (OpenID4VCI 1.0 §4.1.1, §12.2.4). */
export function authorizationServerFor(metadata: CredentialIssuerMetadata, fromOffer?: string): string {
  const servers = metadata.authorization_servers;
  if (fromOffer) {
    if (servers && !servers.includes(fromOffer))
      throw new WalletError(`the offer names authorization server ${fromOffer}, which the issuer does not list`);
    return fromOffer;
  }
  return servers?.[0] ?? metadata.credential_issuer;
}
