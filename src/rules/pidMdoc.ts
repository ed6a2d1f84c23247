/**
 * The EU PID as an ISO mdoc (ARF Annex 3.01, PID Rulebook: chapter 3 the ISO/IEC 18013-5 encoding, chapter 4
 * the SD-JWT VC one). The identity flow's claims are the SD-JWT VC PID's names, which are also OpenID
 * Connect's (`birthdate`, OIDC Core §5.1); this says which mdoc element carries each of them.
 */

/** The PID's mdoc doctype and its namespace (PID Rulebook §3.1). */
export const PID_MDOC_DOCTYPE = 'eu.europa.ec.eudi.pid.1';

/**
 * SD-JWT VC claim -> mdoc element, where the two encodings name the same data identifier differently and the
 * values have the same shape (a full-date reads as `YYYY-MM-DD`, as the SD-JWT VC's string). Every other
 * claim of the rulebook has the same name in both (`family_name`, `given_name`, `place_of_birth`,
 * `personal_administrative_number`, `sex`, `issuing_country`, `age_in_years`, ...).
 */
const RENAMED: Readonly<Record<string, string>> = {
  birthdate: 'birth_date',
  nationalities: 'nationality',
  birth_family_name: 'family_name_birth',
  birth_given_name: 'given_name_birth',
  email: 'email_address',
  phone_number: 'mobile_phone_number',
  date_of_expiry: 'expiry_date',
  date_of_issuance: 'issuance_date',
};

/**
 * SD-JWT VC claims with no one element of the same shape: `address` is an object there and separate
 * `resident_*` elements in the mdoc; `age_equal_or_over` is one object there and `age_over_NN` elements in the
 * mdoc; `picture` is a data URL there and the portrait's bytes in the mdoc.
 */
const NO_ELEMENT: ReadonlySet<string> = new Set(['address', 'age_equal_or_over', 'picture']);

/**
 * The mdoc element a PID claim is read from: the operator's `elements`, else the rulebook's (renamed or the
 * same name); undefined when the mdoc has none (the claim is then asked for from the SD-JWT VC PID only).
 */
export function pidMdocElement(claim: string, elements: Readonly<Record<string, string>> = {}): string | undefined {
  if (Object.hasOwn(elements, claim)) return elements[claim];
  if (NO_ELEMENT.has(claim)) return undefined;
  return Object.hasOwn(RENAMED, claim) ? RENAMED[claim] : claim;
}
