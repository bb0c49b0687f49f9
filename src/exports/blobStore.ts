/** How long a download link works after the poll that returned it (the specification's 5 minutes). */
export const downloadLinkValidityMs = 5 * 60 * 1000;

export type StoredFile = {
  /** Storage key, e.g. `exports/<tenant>/<exportId>.csv`: letters, digits, `-`, `_`, `.` and `/` only. */
  readonly key: string;
  /** The name the browser saves it as (Content-Disposition). */
  readonly fileName: string;
  readonly contentType: string;
};

export type DownloadLink = { readonly url: string; readonly expiresAt: Date };

/** Where built export files live: S3 when S3_BUCKET is set, files under DATA_DIR/exports otherwise. */
export interface BlobStore {
  readonly kind: 's3' | 'local';
  /** Stores the bytes whole, or not at all (a reader never sees a partial file). */
  put(file: StoredFile, bytes: Buffer): Promise<void>;
  /** A link that needs no key or header, valid for `downloadLinkValidityMs` from `now`; a new one per call. */
  link(file: StoredFile, now: Date): Promise<DownloadLink>;
  /** Removes the file; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** S3's own limit on key length; both stores keep to it so that they accept the same keys. */
const maxKeyLength = 1024;
const keySegment = /^[A-Za-z0-9._-]+$/;

/** Whether a storage key is well-formed: `[A-Za-z0-9._-]` segments joined by `/`, none empty, `.` or `..`. */
export function isStorageKey(key: string): boolean {
  if (key.length === 0 || key.length > maxKeyLength) return false;
  return key.split('/').every((segment) => keySegment.test(segment) && segment !== '.' && segment !== '..');
}

/** Throws on a malformed key; the key is not quoted in the message (it may come from a request). */
export function assertStorageKey(key: string): void {
  if (!isStorageKey(key)) throw new Error('invalid storage key');
}

