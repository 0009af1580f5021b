//! Which notification server instance is answering: a notification id means
//! something only to the instance that issued it (a restarted server, or the
//! next login's, counts from 1 again), so a remembered id is replaced only
//! while the same instance runs (see `kairos_app::shown`).
//!
//! On Linux the instance is named by the session bus's GUID (new for every
//! bus daemon) and the unique name owning `org.freedesktop.Notifications`
//! (never reused on one bus): `"<guid>/<:1.n>"`. Elsewhere, and when the bus
//! cannot be asked, it is unknown (`""`) and nothing is replaced.

/// The session bus, kept open to ask who owns the notification service.
pub struct Servers {
    #[cfg(target_os = "linux")]
    bus: Option<(zbus::Connection, zbus::fdo::DBusProxy<'static>)>,
}

#[cfg(target_os = "linux")]
impl Servers {
    /// Connects to the session bus (without one, every answer is `""`).
    pub async fn connect() -> Self {
        let bus = async {
            let conn = zbus::Connection::session().await.ok()?;
            // The bus daemon has no properties worth a round trip.
            let dbus = zbus::fdo::DBusProxy::builder(&conn)
                .cache_properties(zbus::proxy::CacheProperties::No)
                .build()
                .await
                .ok()?;
            Some((conn, dbus))
        };
        Self { bus: bus.await }
    }

    /// The server instance answering now, or `""` when unknown (no bus,
    /// nobody owns the service).
    pub async fn current(&self) -> String {
        let Some((conn, dbus)) = self.bus.as_ref() else {
            return String::new();
        };
        let Ok(name) = zbus::names::BusName::try_from("org.freedesktop.Notifications") else {
            return String::new();
        };
        match dbus.get_name_owner(name).await {
            Ok(owner) => format!("{}/{}", conn.server_guid(), owner.as_str()),
            Err(_) => String::new(),
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Servers {
    /// No bus to ask here.
    pub async fn connect() -> Self {
        Self {}
    }

    /// Unknown: nothing is replaced. (The plain channel does not ask.)
    #[allow(dead_code)]
    pub async fn current(&self) -> String {
        String::new()
    }
}
