/**
 * docs/relying-parties.md, openid-client 6: the recipe (examples/relying-parties/openid-client.ts) runs as
 * written, as its own process, against the service behind TLS under each of the operator's discovery
 * settings; a holder in Chromium with the dev wallet receives a badge through it (PAR) and then shows it.
 * openid-client at its defaults: discovery from the issuer (issuer checked, Discovery 1.0 §4.3) or from
 * the document's URL, client_secret_post, https only, the ID token's iss, aud, exp and nonce checked.
 * Under the interface as written, Version 1 is discovered from its own issuer `{base}/oidc` (its PAR
 * document) and verifies too.
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
  type Setting,
} from '../helpers/recipes.js';
import type { TestService } from '../helpers/service.js';

// a relying-party library does not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const RECIPE = join('examples', 'relying-parties', 'openid-client.ts');

/** What the recipe's SERVER is: the issuer, or under the interface as written Version 2's document URL. */
const server = (setting: Setting, base: string) =>
  setting === 'interface' ? `${base}/v2.0/.well-known/openid-configuration` : v2Issuer(setting, base);

run('openid-client 6: the recipe, run as written', () => {
  const world = recipeWorld();

  for (const setting of SETTINGS) {
    describe(`service setting: ${setting}`, () => {
      let service: TestService;
      let rp: Awaited<ReturnType<typeof startProcess>> | undefined;
      const failed = (err: Error) => Promise.reject(new Error(`${err.message}\nrelying party: ${rp?.output()}`));
      const startApp = async (serverUrl: string) => {
        await rp?.stop();
        rp = await startProcess(
          process.execPath,
          ['--import', 'tsx', RECIPE],
          withEnv({
            SERVER: serverUrl,
            CLIENT_ID: RECIPE_CLIENT.clientId,
            CLIENT_SECRET: RECIPE_CLIENT.clientSecret,
            PORT: String(world.port),
          }),
          `open ${world.app}/verify`,
        );
      };

      beforeAll(async () => {
        await world.newWallet();
        service = await startRecipeService(world.front, setting, [`${world.app}/callback`]);
        await startApp(server(setting, service.url));
      }, 90_000);
      afterAll(async () => {
        await rp?.stop();
        await service?.stop();
      });

      it('issues an EmployeeBadge (Version 2, PAR with the hint): the ID token claims', async () => {
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
        // openid-client's default with a client secret: client_secret_post, at PAR and token
        expect(clientAuthAt(world.front, '/v2.0/oidc/par')).toBe('post');
        expect(clientAuthAt(world.front, '/v2.0/oidc/token')).toBe('post');
      });

      it('verifies the EmployeeBadge (Version 2, PAR): the ID token claims', async () => {
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
        it('verifies through Version 1 (discovered from its issuer {base}/oidc: the PAR document, no PKCE)', async () => {
          await startApp(`${service.url}/oidc`);
          const claims = await presentInBrowser(await world.page(), {
            start: (page) => page.goto(`${world.app}/verify`).then(() => undefined),
            wallet: world.wallet,
            arrive: `${world.app}/callback`,
          }).catch(failed);
          expect(claims).toMatchObject({ iss: `${service.url}/oidc`, aud: RECIPE_CLIENT.clientId, FirstName: 'Ada' });
        });
    });
  }
});
