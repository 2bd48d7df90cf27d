/**
 * The facade's answers as it sent them, for the reference servers that send the same bytes
 * (bench/bare.ts, bench/express-reference.ts): status, header pairs and body per path and
 * Authorization header, in a JSON file named by BENCH_RECORDINGS.
 */
import { readFileSync } from 'node:fs';

export interface Recording {
  path: string;
  authorization: string;
  status: number;
  /** Header name and value pairs as the facade sent them, without Date, Connection and Keep-Alive (Node adds those). */
  headers: string[];
  /** The body, base64. */
  body: string;
}

export interface RecordedAnswer {
  status: number;
  headers: string[];
  body: Buffer;
}

export const answerKey = (path: string, authorization: string) => `${path}\n${authorization}`;

/** The recorded answers of the file BENCH_RECORDINGS names, by `answerKey`. */
export function loadRecordedAnswers(): Map<string, RecordedAnswer> {
  const recordings = JSON.parse(readFileSync(process.env.BENCH_RECORDINGS!, 'utf8')) as Recording[];
  return new Map(
    recordings.map((recording) => [
      answerKey(recording.path, recording.authorization),
      { status: recording.status, headers: recording.headers, body: Buffer.from(recording.body, 'base64') },
    ]),
  );
}
