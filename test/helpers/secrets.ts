/** The test config's client secrets (test/helpers/service.ts): real credentials throughout the tests, so never in a log line. */
export const SECRETS = {
  pkceIssuer: 'test-issuer-secret-0123456789',
  plainIssuer: 'test-plain-secret-0123456789',
  other: 'test-other-secret-0123456789',
};

/** The secret of each test client, by client id (test/helpers/service.ts). */
export const CLIENT_SECRETS: Record<string, string> = {
  'issuer-pkce': SECRETS.pkceIssuer,
  'issuer-plain': SECRETS.plainIssuer,
  other: SECRETS.other,
};
