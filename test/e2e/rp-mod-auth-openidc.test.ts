/**
 * docs/relying-parties.md, Apache mod_auth_openidc: the recipe (examples/relying-parties/mod_auth_openidc.conf,
 * Debian's libapache2-mod-auth-openidc) runs as written in an Apache the test starts, against the service
 * behind TLS under each of the operator's discovery settings; a holder in Chromium opens the protected
 * page, shows an EmployeeBadge with the dev wallet, and the page (claims.cgi) gets the ID token's claims as
 * OIDC_CLAIM_<name>. mod_auth_openidc at its defaults (client_secret_basic, which it prefers when the
 * discovery document lists it; state, nonce, its ID token validation against the
 * JWKS, the userinfo endpoint when discovery names one); PKCE S256 as the recipe turns on.
 * Under the interface as written, the root document is Version 1's: the module verifies through it too.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApache } from '../helpers/apache.js';
import {
  clientAuthAt,
  issueBadge,
  presentInBrowser,
  RECIPE_CLIENT,
  recipeWorld,
  SETTINGS,
  startRecipeService,
  v2DiscoveryUrl,
  v2Issuer,
} from '../helpers/recipes.js';
import type { TestService } from '../helpers/service.js';

// a relying-party library does not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const RECIPE = join('examples', 'relying-parties', 'mod_auth_openidc.conf');
const CGI = join('examples', 'relying-parties', 'claims.cgi');

run('Apache mod_auth_openidc: the recipe, run as written', () => {
  const world = recipeWorld();

  for (const setting of SETTINGS) {
    describe(`service setting: ${setting}`, () => {
      let service: TestService;
      let apache: Awaited<ReturnType<typeof startApache>> | undefined;
      const failed = (err: Error) => Promise.reject(new Error(`${err.message}\nApache: ${apache?.log()}`));
      const startRp = async (metadataUrl: string) => {
        await apache?.stop();
        apache = await startApache({
          port: world.port,
          recipe: RECIPE,
          cgi: CGI,
          cgiPath: '/protected/claims',
          caFile: world.front.caFile,
          env: {
            OIDC_METADATA_URL: metadataUrl,
            OIDC_CLIENT_ID: RECIPE_CLIENT.clientId,
            OIDC_CLIENT_SECRET: RECIPE_CLIENT.clientSecret,
            OIDC_CRYPTO_PASSPHRASE: 'recipe-test-crypto-passphrase-0123456789',
          },
        });
      };

      beforeAll(async () => {
        await world.newWallet();
        service = await startRecipeService(world.front, setting, [`${world.app}/protected/redirect_uri`]);
        await startRp(v2DiscoveryUrl(setting, service.url));
        // mod_auth_openidc verifies; the wallet's badge comes from an issuance by the test's own client
        await issueBadge(service, setting, world.wallet);
      }, 90_000);
      afterAll(async () => {
        await apache?.stop();
        await service?.stop();
      });

      it('verifies the EmployeeBadge (Version 2): the protected page gets the ID token claims', async () => {
        const claims = await presentInBrowser(await world.page(), {
          start: (page) => page.goto(`${world.app}/protected/claims`).then(() => undefined),
          wallet: world.wallet,
          arrive: `${world.app}/protected/claims`,
        }).catch(failed);
        expect(claims).toMatchObject({
          iss: v2Issuer(setting, service.url),
          aud: RECIPE_CLIENT.clientId,
          FirstName: 'Ada',
          LastName: 'Lovelace',
        });
        expect(claims.sub).toMatch(/^[\w-]{43}$/); // D2: the holder key's JWK thumbprint
        // client_secret_basic, which the module prefers when the document lists it (RFC 6749 §2.3.1)
        expect(clientAuthAt(world.front, '/v2.0/oidc/token')).toBe('Basic');
        // the module asks the UserInfo endpoint with the access token (OIDC Core §5.3), which is the ID token (D3)
        expect(world.front.requests).toContainEqual({ method: 'GET', path: '/v2.0/oidc/userinfo', scheme: 'Bearer' });
      });

      if (setting === 'interface')
        it('verifies through Version 1 (the root document, issuer {base}/oidc, authorizev1)', async () => {
          await startRp(`${service.url}/.well-known/openid-configuration`);
          const claims = await presentInBrowser(await world.page(), {
            start: (page) => page.goto(`${world.app}/protected/claims`).then(() => undefined),
            wallet: world.wallet,
            arrive: `${world.app}/protected/claims`,
          }).catch(failed);
          expect(claims).toMatchObject({ iss: `${service.url}/oidc`, aud: RECIPE_CLIENT.clientId, FirstName: 'Ada' });
        });
    });
  }
});
