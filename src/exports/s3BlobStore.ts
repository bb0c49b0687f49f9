import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertStorageKey, downloadLinkValidityMs, type BlobStore, type DownloadLink, type StoredFile } from './blobStore.js';

export type S3BlobStoreOptions = {
  readonly bucket: string;
  /** An S3-compatible service (MinIO, s3rver); absent for AWS itself. */
  readonly endpoint?: string | undefined;
  readonly region: string;
  readonly forcePathStyle: boolean;
  /** For tests only; production leaves them to the SDK's standard chain (environment, profile, role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
};

export type S3BlobStore = BlobStore & {
  readonly kind: 's3';
  /** Throws an Error naming S3_BUCKET when the bucket is missing or cannot be reached with these credentials. */
  checkBucket(): Promise<void>;
};

const bucketCheckTimeoutMs = 10_000;

/** Export files in an S3 bucket, downloaded through presigned GET links. */
export function createS3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
  const { bucket } = options;
  const config: S3ClientConfig = { region: options.region, forcePathStyle: options.forcePathStyle };
  if (options.endpoint !== undefined) {
    config.endpoint = options.endpoint;
    // S3-compatible services often do not know the SDK's default CRC32 checksum headers.
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  if (options.credentials !== undefined) {
    config.credentials = { accessKeyId: options.credentials.accessKeyId, secretAccessKey: options.credentials.secretAccessKey };
  }
  const client = new S3Client(config);

  return {
    kind: 's3',

    async put(file: StoredFile, bytes: Buffer): Promise<void> {
      assertStorageKey(file.key);
      // A single PutObject is atomic: readers see the previous state or the whole object.
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: file.key,
          Body: bytes,
          ContentLength: bytes.length,
          ContentType: file.contentType,
          ContentDisposition: attachment(file.fileName),
        }),
      );
    },

    async link(file: StoredFile, now: Date): Promise<DownloadLink> {
      assertStorageKey(file.key);
      // The signature carries whole seconds (X-Amz-Date and X-Amz-Expires): sign at the whole second
      // and extend the lifetime by the fraction lost, so that the link works for the full validity
      // after `now`; report the expiry S3 will actually enforce.
      const signingDate = new Date(Math.floor(now.getTime() / 1000) * 1000);
      const expiresInSeconds = Math.ceil((now.getTime() + downloadLinkValidityMs - signingDate.getTime()) / 1000);
      const url = await getSignedUrl(
        client,
        new GetObjectCommand({
          Bucket: bucket,
          Key: file.key,
          // Asked of S3 through the link, so the browser gets them whatever the object's metadata says.
          ResponseContentDisposition: attachment(file.fileName),
          ResponseContentType: file.contentType,
        }),
        { expiresIn: expiresInSeconds, signingDate },
      );
      return { url, expiresAt: new Date(signingDate.getTime() + expiresInSeconds * 1000) };
    },

    async delete(key: string): Promise<void> {
      assertStorageKey(key);
      // S3 answers 204 for a key that is not there, so this is idempotent as it stands.
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },

    async checkBucket(): Promise<void> {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(bucketCheckTimeoutMs) });
      } catch (error) {
        // Only the error's name or code: SDK messages can quote request details.
        throw new Error(`Invalid setting S3_BUCKET: bucket "${bucket}" is missing or not reachable (${reasonOf(error)})`);
      }
    },

    close(): Promise<void> {
      client.destroy();
      return Promise.resolve();
    },
  };
}

/** File names are our own (`management-briefing-daily.csv`), so quoting needs no escaping; stray quotes are dropped anyway. */
function attachment(fileName: string): string {
  return `attachment; filename="${fileName.replace(/["\\\r\n]/g, '')}"`;
}

function reasonOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'unknown error';
  const status = '$metadata' in error ? (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode : undefined;
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const name = 'name' in error && typeof error.name === 'string' ? error.name : 'unknown error';
  const label = code ?? name;
  return typeof status === 'number' ? `${label}, HTTP ${status}` : label;
}
