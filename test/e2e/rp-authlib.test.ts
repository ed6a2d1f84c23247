/**
 * docs/relying-parties.md, Authlib: the recipe (examples/relying-parties/authlib_app.py, Flask with Debian's
 * python3-authlib, run by /usr/bin/python3) runs as written against the service behind TLS under each of
 * the operator's discovery settings, and a holder in Chromium with the dev wallet receives a badge through
 * it and then shows it. Authlib at its defaults: client_secret_basic, its own ID token validation against
 * the service's JWKS (signature, iss, aud, exp, nonce); PKCE S256 and the nonce as the recipe turns on.
 * Under the interface as written, the root document is Version 1's: Authlib verifies through it too.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientAuthAt,
  presentInBrowser,
  receiveInBrowser,
  RECIPE_CLIENT,
  recipeWorld,
  SETTINGS,
  startProcess,
  startRecipeService,
  v2Issuer,
  withEnv,
  v2DiscoveryUrl,
} from '../helpers/recipes.js';
import type { TestService } from '../helpers/service.js';

// a relying-party library does not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const RECIPE = join('examples', 'relying-parties', 'authlib_app.py');
/** Debian's Python, where apt installs python3-authlib (scripts/install-relying-parties.sh), whatever python3 PATH finds first */
const PYTHON = '/usr/bin/python3';

run('Authlib (Flask client): the recipe, run as written', () => {
  const world = recipeWorld();

  for (const setting of SETTINGS) {
    describe(`service setting: ${setting}`, () => {
      let service: TestService;
      let rp: Awaited<ReturnType<typeof startProcess>> | undefined;
      const failed = (err: Error) => Promise.reject(new Error(`${err.message}\nrelying party: ${rp?.output()}`));
      const startApp = async (serverMetadataUrl: string) => {
        await rp?.stop();
        rp = await startProcess(
          PYTHON,
          [RECIPE],
          withEnv({
            SERVER_METADATA_URL: serverMetadataUrl,
            CLIENT_ID: RECIPE_CLIENT.clientId,
            CLIENT_SECRET: RECIPE_CLIENT.clientSecret,
            SESSION_SECRET: 'recipe-test-session-secret-0123456789',
            PORT: String(world.port),
            REQUESTS_CA_BUNDLE: world.front.caFile, // requests' documented trust setting
          }),
          /Running on http/,
        );
      };

      beforeAll(async () => {
        await world.newWallet();
        service = await startRecipeService(world.front, setting, [`${world.app}/callback`]);
        await startApp(v2DiscoveryUrl(setting, service.url));
      }, 90_000);
      afterAll(async () => {
        await rp?.stop();
        await service?.stop();
      });

      it('issues an EmployeeBadge (Version 2, the hint on the authorization request): the validated ID token claims', async () => {
        const claims = await receiveInBrowser(await world.page(), {
          start: (page) => page.goto(`${world.app}/issue`).then(() => undefined),
          wallet: world.wallet,
          arrive: `${world.app}/callback`,
        }).catch(failed);
        expect(claims).toMatchObject({
          iss: v2Issuer(setting, service.url),
          aud: RECIPE_CLIENT.clientId,
          FirstName: 'Ada',
          LastName: 'Lovelace',
          SerialNumber: expect.any(String),
        });
        expect(claims.sub).toBe(claims.SerialNumber); // D2
        expect(clientAuthAt(world.front, '/v2.0/oidc/token')).toBe('Basic'); // Authlib's default, RFC 6749 §2.3.1
      });

      it('verifies the EmployeeBadge (Version 2): the validated ID token claims', async () => {
        const claims = await presentInBrowser(await world.page(), {
          start: (page) => page.goto(`${world.app}/verify`).then(() => undefined),
          wallet: world.wallet,
          arrive: `${world.app}/callback`,
        }).catch(failed);
        expect(claims).toMatchObject({
          iss: v2Issuer(setting, service.url),
          aud: RECIPE_CLIENT.clientId,
          FirstName: 'Ada',
          LastName: 'Lovelace',
        });
        expect(claims.sub).toMatch(/^[\w-]{43}$/); // D2: the holder key's JWK thumbprint
      });

      if (setting === 'interface')
        it('verifies through Version 1 (the root document, issuer {base}/oidc, authorizev1): the validated ID token claims', async () => {
          await startApp(`${service.url}/.well-known/openid-configuration`);
          const claims = await presentInBrowser(await world.page(), {
            start: (page) => page.goto(`${world.app}/verify`).then(() => undefined),
            wallet: world.wallet,
            arrive: `${world.app}/callback`,
          }).catch(failed);
          expect(claims).toMatchObject({ iss: `${service.url}/oidc`, aud: RECIPE_CLIENT.clientId, FirstName: 'Ada' });
          expect(clientAuthAt(world.front, '/oidc/token')).toBe('Basic');
        });
    });
  }
});
