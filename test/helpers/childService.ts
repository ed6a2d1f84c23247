import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A configuration file for the service started as its own process (as an operator runs it): memory
 * store, silent logs, key files in `dir`, one credential type and one client with PKCE.
 */
export function writeServiceConfig(
  dir: string,
  o: { base: string; port: number; client: { id: string; secret: string }; redirectUri: string },
): string {
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      baseUrl: o.base,
      port: o.port,
      host: '127.0.0.1',
      store: 'memory',
      logLevel: 'silent',
      keys: {
        idToken: join(dir, 'id-token.jwks.json'),
        credential: join(dir, 'credential.jwks.json'),
        cookies: join(dir, 'cookies.json'),
        pairwise: join(dir, 'pairwise.json'),
      },
      credentialTypes: [
        {
          name: 'EmployeeBadge',
          validity: 'P30D',
          pinCodeLength: 4,
          attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' } },
        },
      ],
      clients: [
        {
          clientId: o.client.id,
          clientSecret: o.client.secret,
          redirectUris: [o.redirectUri],
          pkce: 'required',
          scopes: ['issue.EmployeeBadge', 'EmployeeBadge'],
        },
      ],
    }),
  );
  return file;
}

/** The environment for such a process: the test runner's, without what would override the file. */
export function serviceEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CONFIG;
  delete env.PORT;
  delete env.BASE_URL;
  return env;
}
