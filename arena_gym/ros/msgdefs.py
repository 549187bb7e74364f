"""ROS 2 message definitions (ros2msg) of the types the bridge publishes: what an MCAP
file needs, with no ROS install. Each type's own fields once (copied from the Jazzy
message packages' .msg files, comments dropped); `definition()` appends the dependencies
as rosbag2 writes them."""

from __future__ import annotations

import re

FIELDS = {
    "rosgraph_msgs/Clock": """\
builtin_interfaces/Time clock""",
    "builtin_interfaces/Time": """\
int32 sec
uint32 nanosec""",
    "tf2_msgs/TFMessage": """\
geometry_msgs/TransformStamped[] transforms""",
    "geometry_msgs/TransformStamped": """\
std_msgs/Header header
string child_frame_id
Transform transform""",
    "std_msgs/Header": """\
builtin_interfaces/Time stamp
string frame_id""",
    "geometry_msgs/Transform": """\
Vector3 translation
Quaternion rotation""",
    "geometry_msgs/Vector3": """\
float64 x
float64 y
float64 z""",
    "geometry_msgs/Quaternion": """\
float64 x 0
float64 y 0
float64 z 0
float64 w 1""",
    "nav_msgs/Odometry": """\
std_msgs/Header header
string child_frame_id
geometry_msgs/PoseWithCovariance pose
geometry_msgs/TwistWithCovariance twist""",
    "geometry_msgs/PoseWithCovariance": """\
Pose pose
float64[36] covariance""",
    "geometry_msgs/Pose": """\
Point position
Quaternion orientation""",
    "geometry_msgs/Point": """\
float64 x
float64 y
float64 z""",
    "geometry_msgs/TwistWithCovariance": """\
Twist twist
float64[36] covariance""",
    "geometry_msgs/Twist": """\
Vector3  linear
Vector3  angular""",
    "sensor_msgs/LaserScan": """\
std_msgs/Header header
float32 angle_min
float32 angle_max
float32 angle_increment
float32 time_increment
float32 scan_time
float32 range_min
float32 range_max
float32[] ranges
float32[] intensities""",
    "sensor_msgs/Imu": """\
std_msgs/Header header
geometry_msgs/Quaternion orientation
float64[9] orientation_covariance
geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance
geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance""",
    "sensor_msgs/JointState": """\
std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort""",
    "sensor_msgs/Image": """\
std_msgs/Header header
uint32 height
uint32 width
string encoding
uint8 is_bigendian
uint32 step
uint8[] data""",
    "sensor_msgs/CameraInfo": """\
std_msgs/Header header
uint32 height
uint32 width
string distortion_model
float64[] d
float64[9]  k
float64[9]  r
float64[12] p
uint32 binning_x
uint32 binning_y
RegionOfInterest roi""",
    "sensor_msgs/RegionOfInterest": """\
uint32 x_offset
uint32 y_offset
uint32 height
uint32 width
bool do_rectify""",
    "sensor_msgs/PointCloud2": """\
std_msgs/Header header
uint32 height
uint32 width
PointField[] fields
bool    is_bigendian
uint32  point_step
uint32  row_step
uint8[] data
bool is_dense""",
    "sensor_msgs/PointField": """\
uint8 INT8    = 1
uint8 UINT8   = 2
uint8 INT16   = 3
uint8 UINT16  = 4
uint8 INT32   = 5
uint8 UINT32  = 6
uint8 FLOAT32 = 7
uint8 FLOAT64 = 8
string name
uint32 offset
uint8  datatype
uint32 count""",
    "ros_gz_interfaces/Contacts": """\
std_msgs/Header header
ros_gz_interfaces/Contact[] contacts""",
    "ros_gz_interfaces/Contact": """\
ros_gz_interfaces/Entity collision1
ros_gz_interfaces/Entity collision2
geometry_msgs/Vector3[] positions
geometry_msgs/Vector3[] normals
float64[] depths
ros_gz_interfaces/JointWrench[] wrenches""",
    "ros_gz_interfaces/Entity": """\
uint8 NONE=0
uint8 LIGHT=1
uint8 MODEL=2
uint8 LINK=3
uint8 VISUAL=4
uint8 COLLISION=5
uint8 SENSOR=6
uint8 JOINT=7
uint64 id
string name
uint8 type""",
    "ros_gz_interfaces/JointWrench": """\
std_msgs/Header header
std_msgs/String body_1_name
std_msgs/UInt32 body_1_id
std_msgs/String body_2_name
std_msgs/UInt32 body_2_id
geometry_msgs/Wrench body_1_wrench
geometry_msgs/Wrench body_2_wrench""",
    "std_msgs/String": """\
string data""",
    "std_msgs/UInt32": """\
uint32 data""",
    "geometry_msgs/Wrench": """\
Vector3  force
Vector3  torque""",
}
TYPES = ("rosgraph_msgs/msg/Clock", "tf2_msgs/msg/TFMessage", "nav_msgs/msg/Odometry",
         "sensor_msgs/msg/LaserScan", "sensor_msgs/msg/Imu", "sensor_msgs/msg/JointState",
         "sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo", "sensor_msgs/msg/PointCloud2",
         "ros_gz_interfaces/msg/Contacts")
_PRIMITIVES = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16",
               "uint16", "int32", "uint32", "int64", "uint64", "string", "wstring"}


def _dependencies(name: str) -> list[str]:
    package = name.split("/")[0]
    out = []
    for line in FIELDS[name].splitlines():
        base = re.sub(r"\[.*\]", "", line.split()[0])
        if base not in _PRIMITIVES:
            out.append(base if "/" in base else
                       "std_msgs/Header" if base == "Header" else f"{package}/{base}")
    return out


def definition(kind: str) -> str:
    """The ros2msg schema text of `kind` ("pkg/msg/Name"): its fields, then each type it
    uses (depth first, once) under a "MSG: pkg/Name" separator line."""
    root = kind.replace("/msg/", "/")
    order: list[str] = []

    def visit(name: str) -> None:
        for dep in _dependencies(name):
            if dep not in order:
                order.append(dep)
                visit(dep)

    visit(root)
    parts = [FIELDS[root]] + [f"{'=' * 80}\nMSG: {name}\n{FIELDS[name]}" for name in order]
    return "\n".join(parts) + "\n"
