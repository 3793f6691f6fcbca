//! Listings: `limit` (1-100, default 20) and `offset` in, the `List` envelope out, with a
//! `next_page_url` that continues the same listing.

use app::api::List;

use super::error::{ApiError, ApiResult, ErrorCode};

/// A page of listing, as asked for.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: u32,
    pub offset: u64,
}

impl Page {
    pub const DEFAULT_LIMIT: u32 = 20;
    pub const MAX_LIMIT: u32 = 100;

    pub fn parse(limit: Option<u32>, offset: Option<u64>) -> ApiResult<Page> {
        let limit = limit.unwrap_or(Self::DEFAULT_LIMIT);
        if !(1..=Self::MAX_LIMIT).contains(&limit) {
            return Err(ApiError::new(
                ErrorCode::ParameterInvalid,
                format!("limit must be between 1 and {}", Self::MAX_LIMIT),
            )
            .with_param("limit"));
        }
        Ok(Page {
            limit,
            offset: offset.unwrap_or(0),
        })
    }

    /// Cuts the one extra row the store fetched and builds the listing envelope.
    pub fn list<T>(
        self,
        mut rows: Vec<T>,
        path: &str,
        filters: &[(&str, Option<&str>)],
    ) -> List<T> {
        let has_more = rows.len() > self.limit as usize;
        rows.truncate(self.limit as usize);
        let next_page_url = has_more.then(|| {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("limit", &self.limit.to_string());
            q.append_pair("offset", &(self.offset + u64::from(self.limit)).to_string());
            for (name, value) in filters {
                if let Some(v) = value {
                    q.append_pair(name, v);
                }
            }
            format!("{path}?{}", q.finish())
        });
        List {
            data: rows,
            has_more,
            limit: self.limit,
            offset: self.offset,
            next_page_url,
        }
    }
}
