/**
 * Issue 50, "registration certificates": what a relying party registered (ETSI TS 119 475 §5.2.4
 * `credentials`) and whether a DCQL query stays within it (ARF Annex 2 RPRC_21).
 */
import { describe, expect, it } from 'vitest';
import {
  beyondRegistration,
  claimName,
  pathCovers,
  readRegisteredCredentials,
  type AskedCredential,
} from '../../../src/rules/registration.js';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';

const PID = 'urn:eudi:pid:1';
const registered = readRegisteredCredentials([
  { format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claim: [{ path: ['given_name'] }, { path: ['address'] }] },
  {
    format: 'mso_mdoc',
    meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
    claim: [{ path: ['org.iso.18013.5.1', 'age_over_18'] }],
  },
]);
const sdJwt = (...claims: string[][]): AskedCredential => ({
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID] },
  claims: claims.map((path) => ({ path })),
});

describe('ETSI TS 119 475 §5.2.4: the registered credentials', () => {
  it('reads format, type and claim paths', () => {
    expect(registered).toEqual([
      { format: 'dc+sd-jwt', vctValues: [PID], claims: [['given_name'], ['address']] },
      { format: 'mso_mdoc', doctype: 'org.iso.18013.5.1.mDL', claims: [['org.iso.18013.5.1', 'age_over_18']] },
    ]);
    expect(readRegisteredCredentials(undefined)).toEqual([]);
  });

  it.each([
    [{}, /credentials: must be an array/],
    [[{ meta: {} }], /credentials\[0\]: must be an object with a format/],
    [[{ format: 'dc+sd-jwt', meta: {} }], /credentials\[0\]\.meta\.vct_values/],
    [[{ format: 'dc+sd-jwt', meta: { vct_values: [1] } }], /credentials\[0\]\.meta\.vct_values/],
    [[{ format: 'mso_mdoc', meta: { doctype_value: '' } }], /credentials\[0\]\.meta\.doctype_value/],
    [[{ format: 'mso_mdoc', meta: 'x' }], /credentials\[0\]\.meta: must be an object/],
    [[{ format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claim: {} }], /credentials\[0\]\.claim: must be an array/],
    [[{ format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claim: [{ path: [] }] }], /claim\[0\]\.path/],
    [[{ format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claim: [{ path: [true] }] }], /claim\[0\]\.path/],
    [[{ format: 'dc+sd-jwt', meta: { vct_values: [PID] }, claim: [{ path: [-1] }] }], /claim\[0\]\.path/],
  ])('refuses a malformed credentials claim %j, naming the member', (value, message) => {
    expect(() => readRegisteredCredentials(value)).toThrow(message);
  });
});

describe('ARF RPRC_21: a request within the registration, or what it asks beyond it', () => {
  it('a query for registered claims is within it', () => {
    expect(beyondRegistration([sdJwt(['given_name'])], registered)).toEqual([]);
    expect(beyondRegistration([sdJwt(['given_name'], ['address'])], registered)).toEqual([]);
  });

  it('names every claim asked for that is not registered (attribute names, never values)', () => {
    expect(beyondRegistration([sdJwt(['given_name'], ['family_name'], ['birthdate'])], registered)).toEqual([
      `dc+sd-jwt ${PID}: family_name, birthdate not registered`,
    ]);
  });

  it('a registered claim covers the claims inside it, and a registered array element wildcard its elements', () => {
    expect(pathCovers(['address'], ['address', 'locality'])).toBe(true);
    expect(pathCovers(['address', 'locality'], ['address'])).toBe(false);
    expect(pathCovers(['nationalities', null], ['nationalities', 0])).toBe(true);
    expect(pathCovers(['nationalities', 0], ['nationalities', null])).toBe(false);
    expect(beyondRegistration([sdJwt(['address', 'locality'])], registered)).toEqual([]);
  });

  it('a type not registered at all is named with what was asked of it', () => {
    const asked: AskedCredential = {
      id: 'x',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['https://other.example/vct'] },
      claims: [{ path: ['a'] }],
    };
    expect(beyondRegistration([asked], registered)).toEqual([
      'dc+sd-jwt https://other.example/vct is not registered (asked: a)',
    ]);
  });

  it('an mdoc: the doctype must match, and its elements are named without their namespace', () => {
    const mdoc = (doctype: string, element: string): AskedCredential => ({
      id: 'm',
      format: 'mso_mdoc',
      meta: { doctype_value: doctype },
      claims: [{ path: ['org.iso.18013.5.1', element] }],
    });
    expect(beyondRegistration([mdoc('org.iso.18013.5.1.mDL', 'age_over_18')], registered)).toEqual([]);
    expect(beyondRegistration([mdoc('org.iso.18013.5.1.mDL', 'portrait')], registered)).toEqual([
      'mso_mdoc org.iso.18013.5.1.mDL: portrait not registered',
    ]);
    expect(beyondRegistration([mdoc('org.example.other', 'age_over_18')], registered)).toHaveLength(1);
    expect(claimName('mso_mdoc', ['ns', 'element'])).toBe('element');
    expect(claimName('dc+sd-jwt', ['address', null, 0])).toBe('address.*.0');
  });

  it('a query without claims asks for no selectively disclosable claim: only its type must be registered', () => {
    expect(beyondRegistration([{ id: 'p', format: 'dc+sd-jwt', meta: { vct_values: [PID] } }], registered)).toEqual([]);
  });

  it("the queries this service makes: every type's queries, the SD-JWT VC and the mdoc alternative", () => {
    const type = {
      name: 'Badge',
      vct: 'https://badges.example/vct',
      mdoc: { doctype: 'org.example.badge', namespace: 'org.example.badge' },
      attributes: { FirstName: { type: 'string', required: true }, Email: { type: 'email', required: false } },
    } as never;
    const query = dcqlQueryFor([type], 'https://vc.example');
    const onlySdJwt = readRegisteredCredentials([
      { format: 'dc+sd-jwt', meta: { vct_values: ['https://badges.example/vct'] }, claim: [{ path: ['FirstName'] }] },
    ]);
    expect(beyondRegistration(query.credentials, onlySdJwt)).toEqual([
      'dc+sd-jwt https://badges.example/vct: Email not registered',
      'mso_mdoc org.example.badge is not registered (asked: FirstName, Email)',
    ]);
  });
});
