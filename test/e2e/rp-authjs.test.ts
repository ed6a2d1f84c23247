/**
 * docs/relying-parties.md, Auth.js: the recipe (examples/relying-parties/authjs.ts) runs as written, as its
 * own process, against the service behind TLS under each of the operator's discovery settings, and a
 * holder in Chromium with the dev wallet receives a badge through it and then shows it. Auth.js's OIDC
 * provider type at its defaults (discovery from the issuer, client_secret_basic, PKCE S256, the
 * userinfo_endpoint it requires in discovery), with state and nonce on.
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
} from '../helpers/recipes.js';
import type { TestService } from '../helpers/service.js';

// a relying-party library does not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const RECIPE = join('examples', 'relying-parties', 'authjs.ts');

run('Auth.js (@auth/core): the recipe, run as written', () => {
  const world = recipeWorld();

  for (const setting of SETTINGS) {
    describe(`service setting: ${setting}`, () => {
      let service: TestService;
      let rp: Awaited<ReturnType<typeof startProcess>>;
      const failed = (err: Error) => Promise.reject(new Error(`${err.message}\nrelying party: ${rp.output()}`));

      beforeAll(async () => {
        await world.newWallet();
        service = await startRecipeService(world.front, setting, [`${world.app}/auth/callback/vc`]);
        rp = await startProcess(
          process.execPath,
          ['--import', 'tsx', RECIPE],
          withEnv({
            ISSUER: v2Issuer(setting, service.url),
            CLIENT_ID: RECIPE_CLIENT.clientId,
            CLIENT_SECRET: RECIPE_CLIENT.clientSecret,
            AUTH_SECRET: 'recipe-test-auth-secret-0123456789abcdef',
            PORT: String(world.port),
            // the interface as written: Auth.js derives discovery from the issuer, whose root document is Version 1's
            ...(setting === 'interface' ? { DISCOVERY: 'off' } : {}),
          }),
          `open ${world.app}/verify`,
        );
      }, 90_000);
      afterAll(async () => {
        await rp?.stop();
        await service?.stop();
      });

      it('issues an EmployeeBadge: the hint rides on the sign-in, the session holds the ID token claims', async () => {
        const claims = await receiveInBrowser(await world.page(), {
          start: async (page) => {
            await page.goto(`${world.app}/issue`);
            await page.getByRole('button', { name: 'Receive your employee badge' }).click();
          },
          wallet: world.wallet,
          arrive: `${world.app}/claims`,
        }).catch(failed);
        expect(claims).toMatchObject({
          iss: v2Issuer(setting, service.url),
          aud: RECIPE_CLIENT.clientId,
          FirstName: 'Ada',
          LastName: 'Lovelace',
          SerialNumber: expect.any(String),
          nonce: expect.any(String),
        });
        expect(claims.sub).toBe(claims.SerialNumber); // D2
        expect(clientAuthAt(world.front, '/v2.0/oidc/token')).toBe('Basic'); // Auth.js's default, RFC 6749 §2.3.1
      });

      it('verifies the EmployeeBadge: the wallet presents, the session holds the verified claims', async () => {
        const claims = await presentInBrowser(await world.page(), {
          start: async (page) => {
            await page.goto(`${world.app}/verify`);
            await page.getByRole('button', { name: 'Show your badge' }).click();
          },
          wallet: world.wallet,
          arrive: `${world.app}/claims`,
        }).catch(failed);
        expect(claims).toMatchObject({
          iss: v2Issuer(setting, service.url),
          aud: RECIPE_CLIENT.clientId,
          FirstName: 'Ada',
          LastName: 'Lovelace',
        });
        expect(claims.sub).toMatch(/^[\w-]{43}$/); // D2: the holder key's JWK thumbprint
      });
    });
  }
});
