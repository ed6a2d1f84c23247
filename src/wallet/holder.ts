import { randomUUID } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';
import { WalletError } from './errors.js';
import { importedMdoc, importedSdJwt } from './imported.js';
import { redeemOffer, requestCredential, sendNotification } from './issuance.js';
import { fetchIssuerMetadata } from './metadata.js';
import { checkPin, resolveOffer } from './offer.js';
import {
  presentationFor,
  resolveRequest,
  selectCredentials,
  submitResponse,
  type CredentialSelector,
} from './presentation.js';
import { verifyReceivedCredential } from './verifyCredential.js';
import {
  readWalletFile,
  writeWalletFile,
  type StoredCredential,
  type StoredMdoc,
  type StoredSdJwt,
  type WalletContents,
} from './walletFile.js';

export type { StoredCredential, StoredMdoc, StoredSdJwt } from './walletFile.js';
export type { CredentialQuery, CredentialSelector } from './presentation.js';
export { WalletError } from './errors.js';

/**
 * The dev wallet (D11): receives SD-JWT VCs over OpenID4VCI 1.0 (pre-authorized code flow, with PIN),
 * imports SD-JWT VCs and ISO mdocs issued elsewhere, keeps them, with one holder key per credential, in a
 * local file, and presents them over OpenID4VP 1.0 as a HAIP wallet does (DCQL with credential_sets,
 * request by reference fetched by GET or POST, signed under X.509 certificates it checks, direct_post or
 * encrypted direct_post.jwt). It speaks only the open standards, so it works against any conformant issuer
 * or verifier; the server never depends on it.
 */
export class DevWallet {
  readonly #file: string;
  #contents: WalletContents;
  /** DER CA certificates whose verifiers this wallet answers (OpenID4VP 1.0 §5.9.3 x509 prefixes) */
  readonly #trust: Uint8Array[];
  /** DER CA certificates that vouch for the issuers of the credentials it receives (their `x5c`) */
  readonly #issuerTrust: Uint8Array[];

  private constructor(file: string, contents: WalletContents, trust: Uint8Array[], issuerTrust: Uint8Array[]) {
    this.#file = file;
    this.#contents = contents;
    this.#trust = trust;
    this.#issuerTrust = issuerTrust;
  }

  static async open(file: string, opts: { trust?: Uint8Array[]; issuerTrust?: Uint8Array[] } = {}): Promise<DevWallet> {
    return new DevWallet(file, await readWalletFile(file), opts.trust ?? [], opts.issuerTrust ?? []);
  }

  list(): StoredCredential[] {
    return structuredClone(this.#contents.credentials);
  }

  /**
   * Offer → metadata → token (with the PIN as `tx_code`) → nonce → proof with a fresh holder key →
   * credential → independent verification (an `x5c` chain checked, anchored in `issuerTrust` when given) →
   * stored. Issuer errors surface as "error: description".
   */
  async receive(
    offerUri: string,
    opts: { pin?: string; fetch?: typeof fetch; issuerTrust?: Uint8Array[] } = {},
  ): Promise<StoredSdJwt> {
    const fetchImpl = opts.fetch ?? fetch;
    const offer = await resolveOffer(offerUri, fetchImpl);
    checkPin(offer.txCode, opts.pin);

    const issuerMetadata = await fetchIssuerMetadata(offer.credentialIssuer, fetchImpl);
    const configurationId = offer.credentialConfigurationIds[0];
    const configuration = issuerMetadata.credential_configurations_supported[configurationId];
    if (!configuration) throw new WalletError(`the issuer does not describe the offered credential ${configurationId}`);
    if (configuration.format !== 'dc+sd-jwt')
      throw new WalletError(
        `credential format ${String(configuration.format)} is not supported; the dev wallet takes dc+sd-jwt`,
      );

    const {
      token,
      privateKey,
      publicJwk: holderPublicJwk,
      proof,
    } = await redeemOffer(offer, issuerMetadata, opts.pin, fetchImpl);
    const { credential, notificationId } = await requestCredential(
      issuerMetadata.credential_endpoint,
      { accessToken: token.accessToken, tokenType: token.tokenType, credentialConfigurationId: configurationId, proof },
      fetchImpl,
    );

    // OpenID4VCI 1.0 §11: the issuer is told what became of the credential (best effort: it is optional)
    const notify = async (event: 'credential_accepted' | 'credential_failure') => {
      const endpoint = issuerMetadata.notification_endpoint;
      if (!notificationId || typeof endpoint !== 'string') return;
      await sendNotification(
        endpoint,
        { accessToken: token.accessToken, tokenType: token.tokenType, notificationId, event },
        fetchImpl,
      ).catch(() => undefined);
    };
    const issuerTrust = opts.issuerTrust ?? this.#issuerTrust;
    const verified = await verifyReceivedCredential(
      credential,
      { credentialIssuer: offer.credentialIssuer, vct: configuration.vct, holderPublicJwk, issuerTrust },
      fetchImpl,
    ).catch(async (err: unknown) => {
      await notify('credential_failure'); // a credential that does not verify is not kept
      throw err;
    });
    const stored: StoredSdJwt = {
      id: randomUUID(),
      format: 'dc+sd-jwt',
      credential,
      issuer: verified.issuer,
      vct: verified.vct,
      receivedAt: new Date().toISOString(),
      holderKey: await exportJWK(privateKey),
      claims: verified.claims,
    };
    const kept = await this.#keep(stored).catch(async (err: unknown) => {
      await notify('credential_failure'); // not stored
      throw err;
    });
    await notify('credential_accepted');
    return kept;
  }

  /** As `receive`, but the offer's ISO mdoc configuration (OpenID4VCI 1.0 Appendix A.2), kept as an mdoc the wallet presents. */
  async receiveMdoc(
    offerUri: string,
    opts: { pin?: string; fetch?: typeof fetch; issuerTrust?: Uint8Array[] } = {},
  ): Promise<StoredMdoc> {
    const { receiveMdoc } = await import('./mdocReceipt.js'); // the mdoc library loads only when an mdoc is involved
    return this.#keep(await receiveMdoc(offerUri, opts));
  }

  /** Adds to the file as it is now: another process may have added to it. */
  async #keep<T extends StoredCredential>(stored: T): Promise<T> {
    const contents = await readWalletFile(this.#file);
    contents.credentials.push(stored);
    await writeWalletFile(this.#file, contents);
    this.#contents = contents;
    return structuredClone(stored);
  }

  /**
   * Answers an OpenID4VP 1.0 request: resolves the request object (same client_id as the link; signed under
   * a verifier certificate that chains to `trust`, or unsigned under `redirect_uri`; fetched by POST with
   * the wallet's metadata when the link says so), picks for each DCQL Credential Query to answer (with
   * `credential_sets`, per set the first option it can answer) a stored credential of the requested vct or
   * doctype (`select` may choose another; the default takes the first), discloses only the claims of the
   * first claim set it satisfies, binds each presentation to the request (SD-JWT VC: a key binding JWT;
   * mdoc: a device signature over the OpenID4VP handover), and POSTs `vp_token` (`{ <query id>:
   * [presentation] }`) and `state` to the response_uri, encrypted to the verifier's key for direct_post.jwt.
   *
   * Returns the verifier's answer as is: 200 when it accepted the presentations, its error otherwise; the
   * `redirect_uri` it names (§8.2: where the browser on this device goes on); and the subject of the
   * verifier's certificate. When the wallet holds no matching credential it tells the verifier
   * (`access_denied`) and throws.
   */
  async present(
    walletUri: string,
    opts: { fetch?: typeof fetch; select?: CredentialSelector; trust?: Uint8Array[] } = {},
  ): Promise<{ status: number; body: unknown; redirectUri?: string; verifier?: string }> {
    const fetchImpl = opts.fetch ?? fetch;
    const request = await resolveRequest(walletUri, fetchImpl, { trust: opts.trust ?? this.#trust });
    this.#contents = await readWalletFile(this.#file); // another process may have added to the file
    const selection = selectCredentials(request, this.#contents.credentials, opts.select);
    const verifier = request.verifierSubject !== undefined ? { verifier: request.verifierSubject } : {};
    if ('missing' in selection) {
      const refused = await submitResponse(
        request,
        { error: 'access_denied', error_description: 'no matching credential in the wallet' },
        fetchImpl,
      );
      const redirectUri = redirectUriOf(refused.body);
      // §8.2: the verifier may send the browser on after an error too
      throw new WalletError(
        `no credential in the wallet matches the request for ${selection.missing}${redirectUri ? `; open this address in the browser to go back: ${redirectUri}` : ''}`,
      );
    }
    const vpToken: Record<string, string[]> = {};
    for (const selected of selection) vpToken[selected.query.id] = [await presentationFor(selected, request)];
    const answer = await submitResponse(request, { vp_token: JSON.stringify(vpToken) }, fetchImpl);
    const redirectUri = redirectUriOf(answer.body);
    return { ...answer, ...(redirectUri ? { redirectUri } : {}), ...verifier };
  }

  /**
   * Keeps an SD-JWT VC issued elsewhere, with the private holder key it is bound to. The credential must be
   * an SD-JWT VC (`typ dc+sd-jwt`) whose `cnf.jwk` is the public part of `holderKey`. Its issuer signature
   * is not checked here: the wallet may not know the issuer's keys; verifiers check it.
   */
  async import(credential: string, holderKey: JWK): Promise<StoredSdJwt> {
    return this.#keep(await importedSdJwt(credential, holderKey));
  }

  /**
   * Keeps an ISO mdoc issued elsewhere (ISO/IEC 18013-5): its IssuerSigned (base64url CBOR), its doctype and
   * the private P-256 device key its MSO is bound to. The elements are read from IssuerSigned; the issuer
   * signature is not checked here (verifiers check it against their IACAs).
   */
  async importMdoc(input: { issuerSigned: string; doctype: string; deviceKey: JWK }): Promise<StoredMdoc> {
    return this.#keep(await importedMdoc(input));
  }
}

/** §8.2: the response URI's JSON answer may name where the user agent goes on. */
function redirectUriOf(body: unknown): string | undefined {
  const redirectUri = (body as { redirect_uri?: unknown } | undefined)?.redirect_uri;
  return typeof redirectUri === 'string' && redirectUri ? redirectUri : undefined;
}
