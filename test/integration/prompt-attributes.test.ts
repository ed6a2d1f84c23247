/**
 * Issue 22 (what a newcomer hit): the prompt shows the config's attribute labels ("E-mail" where the
 * config says so), and an issuance lists only the attributes the hint carried, not every declared one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, testConfig, type TestService } from '../helpers/service.js';
import { pushIssuance } from '../helpers/flows.js';
import { Browser } from '../helpers/rp.js';

let t: TestService;
beforeAll(async () => {
  const types = testConfig(0).credentialTypes as { name: string; attributes: Record<string, Record<string, unknown>> }[];
  const labelled = types.map((type) =>
    type.name === 'EmployeeBadge'
      ? { ...type, attributes: { ...type.attributes, FirstName: { ...type.attributes.FirstName, label: 'Given name' }, Email: { ...type.attributes.Email, label: 'E-mail' } } }
      : type,
  );
  t = await startTestService({ credentialTypes: labelled });
});
afterAll(async () => t?.stop());

async function promptFor(attributes: Record<string, string>): Promise<string> {
  const rp = await pushIssuance(t.url, { clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer, attributes, pin: '4821', redirectUri: REDIRECT });
  const prompt = await new Browser(REDIRECT).follow(rp.authorizeUrl.href);
  expect(prompt.res?.status).toBe(200);
  return prompt.html!;
}
const chips = (page: string) => [...page.matchAll(/<li class="chip" data-attribute="([^"]+)">([^<]+)<\/li>/g)].map((m) => [m[1], m[2]]);

describe('the issuance prompt lists what the credential will contain', () => {
  it('with the config labels, and only the attributes the hint carried', async () => {
    expect(chips(await promptFor({ FirstName: 'Ada', LastName: 'Lovelace' }))).toEqual([
      ['FirstName', 'Given name'],
      ['LastName', 'Last name'],
    ]);
    expect(chips(await promptFor({ FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' }))).toEqual([
      ['FirstName', 'Given name'],
      ['LastName', 'Last name'],
      ['Email', 'E-mail'],
    ]);
  });
});
