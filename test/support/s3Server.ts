import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The fixed credentials s3rver accepts (it checks signatures made with them). */
export const s3rverCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export type S3TestServer = {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The service's settings for this server (credentials go through `useS3Credentials`). */
  readonly env: { readonly S3_BUCKET: string; readonly S3_ENDPOINT: string; readonly S3_FORCE_PATH_STYLE: 'true'; readonly S3_REGION: 'us-east-1' };
  close(): Promise<void>;
};

type S3rverInstance = { run(): Promise<AddressInfo>; close(): Promise<void> };
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

/** The AWS SDK warns once about Node 20 support; the warning is noise in test output only. */
function silenceSdkNodeWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
}

/**
 * A real S3-compatible server (s3rver) on an ephemeral port of 127.0.0.1, storing into a fresh
 * temporary directory that `close` removes, with one empty bucket.
 */
export async function startS3Server(bucket = 'supply-api-exports-test'): Promise<S3TestServer> {
  if (bucket.length < 3) throw new Error('S3 bucket names have at least 3 characters');
  silenceSdkNodeWarning();
  // s3rver is CommonJS without type declarations.
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    credentials: s3rverCredentials,
    env: { S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true', S3_REGION: 'us-east-1' },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Makes the SDK's standard credential chain (used when the service builds its own client) find the
 * s3rver credentials, through AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY of this process
 * (AWS_SESSION_TOKEN is unset meanwhile). The
 * returned function puts the previous values back.
 */
export function useS3Credentials(credentials: S3TestServer['credentials'] = s3rverCredentials): () => void {
  silenceSdkNodeWarning();
  const names = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;
  const previous = names.map((name) => [name, process.env[name]] as const);
  process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
  // A developer's own session token would be sent along and make s3rver's signature check differ.
  delete process.env.AWS_SESSION_TOKEN;
  return () => {
    for (const [name, value] of previous) restore(name, value);
  };
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) {
    delete process.env[name];
  } else {
    process.env[name] = value;
  }
}
