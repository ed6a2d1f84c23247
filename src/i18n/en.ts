/**
 * Every text a holder reads, in English: the built-in catalogue and the reference for `locales/<tag>.json`
 * (same keys, same {arguments}; ICU MessageFormat, so plurals and selects are the translator's to write).
 * Keys group by page; `refusal.*` are the reasons a presentation is refused (src/verification/errors.ts).
 */
export const EN = {
  // every page
  'page.footer': 'Uses the open OpenID standards for verifiable credentials, so any compatible wallet works.',
  'page.support': 'Help',
  'page.privacy': 'Privacy',
  'page.requestFrom': 'Request from {client}',
  'page.title': '{heading} – {client}',

  // the issuance, verification and identity prompt
  'prompt.issuance.heading':
    '{count, plural, one {Add your credential to your wallet} other {Add your credentials to your wallet}}',
  'prompt.issuance.lead':
    '{client} wants to add this credential to your wallet. You can review it in your wallet before you accept it.',
  'prompt.verification.heading': '{count, plural, one {Share your credential} other {Share your credentials}}',
  'prompt.verification.lead':
    '{client} is asking to see the following from your wallet. You review and approve it in your wallet before anything is shared.',
  'prompt.identity.heading': 'Prove your identity',
  'prompt.identity.lead':
    '{client} is asking you to prove who you are with the identity credential in your wallet. You review and approve it in your wallet before anything is shared.',
  'prompt.credentials': '{count, plural, one {Credential} other {Credentials}}',
  'prompt.requested': 'Requested information',
  'prompt.willShare': 'You will share:',
  'prompt.willShareIfPresent': 'And, if your credential has them:',
  'prompt.willShareOnlyIfPresent': 'You will share, if your credential has them:',
  'prompt.willShareAll': 'You will share all information in this credential.',
  'prompt.contains': 'Contains',
  'prompt.pin.title': 'Have your PIN ready.',
  'prompt.pin.text':
    'Your wallet will ask for a {length}-digit PIN. {client} sent it to you separately, for example by e-mail or text message.',
  'prompt.pin.textNoLength':
    'Your wallet will ask for a PIN. {client} sent it to you separately, for example by e-mail or text message.',
  'prompt.or': 'or',
  'prompt.thisDevice': 'Wallet on this device',
  'prompt.openWallet': 'Open in wallet on this device',
  'prompt.copyLink': 'Copy link',
  'prompt.linkCopied': 'Link copied',
  'prompt.copyFailed': 'Could not copy. Select and copy the link:',
  'prompt.walletHint':
    'No wallet opened? Make sure a compatible wallet app is installed on this device, or scan the QR code with a wallet on another device.',
  'prompt.otherDevice': 'Wallet on another device',
  'prompt.qrLabel': 'QR code for your wallet app',
  'prompt.qrTitle': 'Wallet on another device?',
  'prompt.qrText': 'Open the wallet app and scan this code.',
  // the Digital Credentials API's action (where the browser offers it)
  'prompt.dcApi.use': 'Use a wallet on this device',
  'prompt.dcApi.checking': 'Checking what your wallet shared…',
  'prompt.dcApi.declined':
    'Nothing was shared. You can try again, open your wallet with the link, or scan the QR code.',
  'prompt.dcApi.unavailable':
    'Your browser could not reach a wallet. Open your wallet with the link, or scan the QR code.',

  // the progress box of every prompt (server and page script)
  'progress.label': 'Progress',
  'progress.waiting': 'Waiting for your wallet…',
  'progress.expiresIn': 'Expires in {time}',
  'progress.noscript': 'This page updates automatically only with JavaScript. When it is done, select Continue.',
  'progress.expiresAbout':
    '{minutes, plural, =0 {This request has expired.} one {This request expires in about # minute.} other {This request expires in about # minutes.}}',
  'progress.expiresSoon': 'This request expires in less than a minute.',
  'progress.continue': 'Continue',
  'progress.connected': 'Wallet connected…',
  'progress.returning': 'Presented. Finishing in the browser your wallet opened…',
  'progress.pinRetry':
    '{attemptsLeft, plural, =0 {Wrong PIN. No attempts left.} one {Wrong PIN. # attempt left.} other {Wrong PIN. # attempts left.}}',
  'progress.pinRetryAgain': 'Wrong PIN. Please try again.',
  'progress.doneHandover': 'Done. {client} will continue from here. You can close this page.',
  'progress.doneReturning': 'Done. Returning you to {client}…',
  'progress.toldClose': '{client} has been told. You can close this page.',
  'progress.backTo': 'Returning you to {client}…',
  'progress.connectionProblem': 'Connection problem. Trying again…',
  'progress.lastMinute': 'Less than a minute left to finish in your wallet.',
  'progress.expiredTitle': 'This request has expired',
  'progress.failedTitle': 'Something went wrong',
  'progress.failedText': 'Your wallet could not complete this step.',
  'progress.notCompleted': 'This request did not complete.',
  'progress.stalled':
    'Your wallet has not answered yet. If it showed an error or you closed it, get a new code and try again.',
  'progress.refused': 'Try again with a new code, or with another wallet.',
  'progress.freshRequest': 'Get a new code',
  'progress.giveUp': 'Return to {client}',
  'progress.moved': 'This identity check was continued on another device. You can close this page.',

  // the EU PID's standard claims (PID rulebook; the address parts in their flat `resident_*` names), as the
  // identity prompt lists them;
  // identity.VerifiedIdentity.labels in the config names these and others per language
  'claim.given_name': 'Given name',
  'claim.family_name': 'Family name',
  'claim.birthdate': 'Birthdate',
  'claim.birth_given_name': 'Given name at birth',
  'claim.birth_family_name': 'Family name at birth',
  'claim.place_of_birth': 'Place of birth',
  'claim.nationalities': 'Nationalities',
  'claim.sex': 'Sex',
  'claim.address': 'Address',
  'claim.resident_address': 'Address',
  'claim.resident_street': 'Street',
  'claim.resident_house_number': 'House number',
  'claim.resident_postal_code': 'Postal code',
  'claim.resident_city': 'Town or city',
  'claim.resident_state': 'Region',
  'claim.resident_country': 'Country of residence',
  'claim.personal_administrative_number': 'Personal administrative number',
  'claim.picture': 'Photo',
  'claim.email': 'E-mail address',
  'claim.phone_number': 'Phone number',
  'claim.age_over_18': 'Aged 18 or over',
  'claim.age_in_years': 'Age',
  'claim.age_birth_year': 'Year of birth',
  'claim.date_of_expiry': 'Expiry date of the document',
  'claim.date_of_issuance': 'Issue date of the document',
  'claim.issuing_authority': 'Issuing authority',
  'claim.issuing_country': 'Issuing country',
  'claim.document_number': 'Document number',

  // the journey through another identity provider
  'journey.heading': 'Verify your identity',
  'journey.lead':
    '{client} asks you to verify your identity with {provider}. You will go to {provider} and come back here when you are done.',
  'journey.section': 'Identity check',
  'journey.continueWith': 'Continue with {provider}',
  'journey.waiting': 'Waiting for you to finish with {provider}…',
  'journey.otherDevice': 'Continue on another device',
  'journey.qrLabel': 'QR code to continue on another device',
  'journey.qrText': "Scan this code with your phone's camera, or open this link in a browser there:",
  'journey.finished': 'Identity check finished',
  'journey.takingBack': 'Taking you back…',
  'journey.unmatchedTitle': 'This sign-in could not be matched',
  'journey.unmatched':
    'The identity check came back to a browser that did not start it, or it was already used. Go back to the app and start again.',
  'journey.unknownState':
    'The state parameter of this answer does not belong to an identity check started in this browser, so the answer was ignored. If you are verifying your identity, go back to that page and continue there.',
  'journey.endedTitle': 'Already finished',
  'journey.ended': 'This identity check has already finished. You can close this page.',
  'journey.unavailable': '{provider} is not available right now. Please try again later.',
  'journey.refused': '{provider} did not confirm your identity.',
  'journey.invalid': 'The answer from {provider} could not be accepted. Please start again.',

  // message pages
  'message.hintStartAgain': 'Go back to the app or website you came from and start again.',
  'message.hintOurSide': 'This is a problem on our side. Please try again in a few minutes.',
  'message.code': 'Error code {status}',
  'message.expiredTitle': 'This link can no longer be used',
  'message.expired':
    'The request has expired, was already completed, was opened in another browser, or does not exist. Go back to the app and start again.',
  'message.movedTitle': 'Continued on another device',
  'message.doneTitle': 'All done',
  'message.done': '{client} will continue from here. You can close this page.',
  'message.endedTitle': 'This request did not complete',
  'message.ended': '{client} has been told. You can close this page.',
  'message.authorizeTitle': 'This request cannot be completed',
  'message.authorize':
    "The app that sent you here asked for something this service cannot do, or its link is no longer valid. Go back to the app and start again; if it happens again, tell the app's provider.",
  'message.unavailableTitle': 'Temporarily unavailable',
  'message.unavailable': 'The service cannot complete this step right now. Please try again in a moment.',
  'message.errorTitle': 'Something went wrong',
  'message.error': 'Please try again. Reference: {ref}',
  'message.otherSiteTitle': 'This was not sent from this page',
  'message.otherSite':
    'Another website tried to send this for you, so nothing was changed. Go back to the page you were on and use its own button.',

  // how a wallet step ended, as the prompt's progress reports it
  'status.expired': 'This request has expired. Go back to the app and start again.',
  'status.notCompleted': 'This request did not complete. Go back to the app and start again.',
  'status.offerExpired': 'This offer has expired.',
  'status.pinExhausted':
    '{limit, plural, one {The PIN was entered wrongly # time; this offer is no longer valid.} other {The PIN was entered wrongly # times; this offer is no longer valid.}}',
  'status.walletDeclined': 'The request was declined in the wallet, or the wallet has no matching credential.',
  'status.walletUnsupportedFormat': 'The wallet does not support the credential format that was asked for.',
  'status.walletUnavailable': 'The wallet is not available.',
  'status.walletError': 'The wallet could not answer the request.',
  'status.unencrypted': 'The wallet sent its answer unencrypted, which this service does not accept.',
  'status.checkFailed': 'Something went wrong while checking the credentials. Please try again.',
  'status.otherWallet': 'This page was not opened by the wallet that answered. Please start again.',

  // why a presentation was refused
  'refusal.malformed_response': 'The wallet sent an answer this service could not read.',
  'refusal.vp_token_too_large': 'The wallet sent more data than this service accepts.',
  'refusal.unrequested_credential': 'The wallet presented a credential that was not asked for.',
  'refusal.missing_credential': 'The wallet did not present every credential that was asked for.',
  'refusal.too_many_presentations': 'The wallet presented more credentials than were asked for.',
  'refusal.missing_claims': 'The presented credential does not contain everything that was asked for.',
  'refusal.malformed_presentation': 'The wallet sent a credential this service could not read.',
  'refusal.unsupported_credential': 'The presented credential is of a kind this service does not accept.',
  'refusal.key_binding_missing': 'The wallet did not prove that the credential belongs to it.',
  'refusal.issuer_not_trusted': 'The credential was issued by an issuer this service does not trust.',
  'refusal.issuer_keys_unavailable': "The credential issuer's keys could not be retrieved. Please try again later.",
  'refusal.unknown_issuer_key': 'The credential was not signed with a key of its issuer.',
  'refusal.issuer_signature_invalid': "The credential's signature is not valid.",
  'refusal.wrong_vct': 'The presented credential is not of the type that was asked for.',
  'refusal.credential_expired': 'The presented credential has expired.',
  'refusal.credential_not_yet_valid': 'The presented credential is not valid yet.',
  'refusal.disclosure_not_in_credential': 'The presented credential was altered.',
  'refusal.holder_key_missing': 'The presented credential is not bound to a wallet key.',
  'refusal.key_binding_invalid': "The wallet's proof for this request is not valid.",
  'refusal.key_binding_signature_invalid': "The wallet's proof for this request is not valid.",
  'refusal.wrong_audience': "The wallet's proof was made for another service.",
  'refusal.wrong_nonce': "The wallet's proof was made for another request.",
  'refusal.stale_key_binding': "The wallet's proof is too old. Please try again.",
  'refusal.wrong_sd_hash': "The wallet's proof does not match the presented credential.",
  'refusal.credential_status_invalid': "The presented credential's status could not be checked.",
  'refusal.credential_revoked': 'The presented credential has been revoked by its issuer.',
  'refusal.credential_suspended': 'The presented credential is suspended by its issuer.',
  'refusal.credential_status_unavailable':
    "The presented credential's status could not be checked right now. Please try again later.",
  'refusal.presentation_invalid': 'The presented credential could not be verified.',
  'refusal.mdoc_invalid': 'The wallet sent a document this service could not read.',
  'refusal.mdoc_wrong_doctype': 'The presented document is not of the type that was asked for.',
  'refusal.mdoc_issuer_not_trusted': 'The document was issued by an issuer this service does not trust.',
  'refusal.mdoc_issuer_signature_invalid': "The document's signature is not valid.",
  'refusal.mdoc_not_valid_now': 'The presented document has expired or is not valid yet.',
  'refusal.mdoc_expired': 'The presented document has expired.',
  'refusal.mdoc_not_yet_valid': 'The presented document is not valid yet.',
  'refusal.mdoc_digest_mismatch': 'The presented document was altered.',
  'refusal.mdoc_device_signature_invalid': "The wallet's proof for this request is not valid.",
  'refusal.mdoc_device_mac_unsupported': 'The wallet proved the document in a way this service does not accept.',
} as const;

export type MessageId = keyof typeof EN;
