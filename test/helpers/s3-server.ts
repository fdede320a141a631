/**
 * Test helper: a local S3-compatible server (s3rver, objects on disk in a temporary
 * directory) on a free loopback port, with one empty bucket, and a client for looking behind
 * the payload store's back. What the S3 payload backend talks to in tests is a real S3 HTTP
 * API: signed requests, XML errors, 404 for absent keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';

// s3rver's fixed credentials; any signed request with them is accepted.
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** a client of the server, path-style, with its credentials */
  client: S3Client;
  /** the AWS_* and TAPEDECK_S3_* variables a `tapedeck` process needs to use it */
  env(prefix?: string): Record<string, string>;
  /** every key in the bucket */
  keys(): Promise<string[]>;
  read(key: string): Promise<Uint8Array>;
  write(key: string, bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'tapedeck-payloads'): Promise<TestS3Server> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    client,
    env: (prefix) => ({
      TAPEDECK_PAYLOAD_STORE: 's3',
      TAPEDECK_S3_ENDPOINT: endpoint,
      TAPEDECK_S3_BUCKET: bucket,
      TAPEDECK_S3_FORCE_PATH_STYLE: 'true',
      ...(prefix ? { TAPEDECK_S3_PREFIX: prefix } : {}),
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
    }),
    async keys() {
      const keys: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return keys.sort();
    },
    async read(key) {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return object.Body ? object.Body.transformToByteArray() : new Uint8Array(0);
    },
    async write(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(bytes) }));
      // A test that overwrote an object once read the old bytes back (why, not known): wait
      // until a read gives the new ones, so a test that replaces an object reads the replacement
      const wanted = Buffer.from(bytes);
      for (let tries = 0; tries < 100; tries++) {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const held = object.Body ? Buffer.from(await object.Body.transformToByteArray()) : Buffer.alloc(0);
        if (held.equals(wanted)) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`s3rver still serves the old bytes of ${key}`);
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
