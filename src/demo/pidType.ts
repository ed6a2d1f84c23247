import type { CredentialType } from '../config/schema.js';

/** The demo PID issuer's path under the base URL, and the one credential it issues (src/demo/pid.ts). */
export const DEMO_PID_PATH = 'demo-pid';
export const DEMO_PID_VCT = 'urn:eudi:pid:1';

/**
 * The one credential type. `type` matters to id_token_hint templates only (this issuer takes no hint);
 * `nationalities` is an array of ISO 3166-1 alpha-2 codes, as in the EU PID, disclosed as one claim.
 */
export const DEMO_PID_TYPE: CredentialType = {
  name: 'PID',
  vct: DEMO_PID_VCT,
  displayName: 'Demo PID',
  validity: 'P30D',
  attributes: {
    given_name: { type: 'string', required: true, label: 'Given name' },
    family_name: { type: 'string', required: true, label: 'Family name' },
    birthdate: { type: 'date', required: true, label: 'Birth date' },
    nationalities: { type: 'string', required: false, label: 'Nationalities' },
    personal_administrative_number: { type: 'string', required: false, label: 'Personal administrative number' },
  },
};
