import type { ColumnType } from "kysely";

export interface OutputsTable {
  output_id: string;
  job_id: string;
  key_id: string;
  content_type: string;
  filename: string;
  attachment: ColumnType<boolean, boolean | undefined, never>;
  size_bytes: ColumnType<string, number, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
  expires_at: Date;
  deleted_at: Date | null;
}

export interface StorageDb {
  outputs: OutputsTable;
}
