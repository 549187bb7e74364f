"""The RIHS01 type hashes of the interface packages, as rosidl's own generator computes
them in the ROS venv (share/<package>/{msg,srv}/<Type>.json, rosidl_generator_type_description):
a client built from a definition gets the same hash only if fields, order, types and
defaults match. The types that follow Arena's published definitions keep the hashes they
have had (their files unchanged byte for byte); the seed's newer interface (Prim.visuals,
Arena's light contract) has its own, pinned too, so neither moves by accident."""

from __future__ import annotations

import json

import pytest

# the types whose definitions did not change with the seed's interface (docs/ros.md names
# the Arena version each follows)
KEPT = {
    "arena_mujoco_msgs/msg/Ceiling":
        "be3858b20619eaefb92b68122d585006939adaca692bbb4c45173ca26a523611",
    "arena_mujoco_msgs/msg/Floor":
        "9d6582198194719eb1318250df7b9d9c3be88798c4ee2f8017da253c8212fc72",
    "arena_mujoco_msgs/msg/Material":
        "9d021aae8f1a13406e5bcd8434b20e8f0d61cb6e6ace40be1b8dcbdc480d87e9",
    "arena_mujoco_msgs/msg/PhysicsParams":
        "e4f0be6cfecb24ae60788eeb50a4683e8761fdea2efe617735ff4f66de63f832",
    "arena_mujoco_msgs/msg/Scale":
        "0e4b2f584e6738dfdae8326ce896d5812d15d841ddd6a79f1ff602662805dbe4",
    "arena_mujoco_msgs/msg/Sensor":
        "54f44710223855e31a8ca75e7d1519d18cf0865fea45ce6fa2e95000cb748595",
    "arena_mujoco_msgs/msg/Wall":
        "4ce90c4cd3b1381118e86b8b3d7de1453ffa9561dc769d525270b0626a83aef6",
    "arena_mujoco_msgs/srv/DeleteLights":
        "7aefc7c529794e4c6e97efbe6c1a86f226cdff2e2fe00b85aaba6c2d41ffd54f",
    "arena_mujoco_msgs/srv/DeletePrims":
        "d4ffc14a579cd33a88554dd290f6d65799bf8fb82166f3951dc3d46db09a674d",
    "arena_mujoco_msgs/srv/ResetWorld":
        "2be452177d2ca0f5cf35ad95784eb3c8bd2a8797be4111f754dda86938244e5f",
    "arena_mujoco_msgs/srv/SpawnCeilings":
        "e5657e277919daa0eb18554f5a24ceccf77a796d7a9f579bf2eae9f751607ebe",
    "arena_mujoco_msgs/srv/SpawnFloors":
        "bd56baee1b2d372e10e4d62dfbba203e839daba95c708bb729b66807e7bfe78b",
    "arena_mujoco_msgs/srv/SpawnUrdf":
        "0e479ee644c93a059518b39050f87ffacfcd2f5cea89b5f6ede9fd057d417c3a",
    "arena_mujoco_msgs/srv/SpawnWalls":
        "337d1f192c189e852f5d31df5496a219c317853352ee52c8ea375c37329a0a0d",
    "arena_mujoco_msgs/srv/Step":
        "a8d83bc5d5440d2cecb6e3f4e8586cffb2b4d82f63ac898532f256b016ef08e6",
    "arena_people_msgs/msg/FaceView":
        "f8eec5b41d22230da22016ed1dfedabfc0c0b2b46bf343aa0badd5dabadff00c",
    "arena_people_msgs/msg/Gesture":
        "0e475170682fffab746929f0397834b07d06d41c4c13ac6d709f6a770187a755",
    "arena_people_msgs/msg/Pedestrian":
        "332c4cf7526738e0432e3694eb42251ba013c4c588704eea9140bd1fe85fe547",
    "arena_people_msgs/msg/Pedestrians":
        "a62aa0ea59151161c618fe781e144a36cde9294c7dfd9f56784ca8f207386c50",
    "arena_people_msgs/msg/SpawnPedestrian":
        "38f50c8e6aef168af83d79147062bfed73045e3092bf0b813e93987d59f2be7f",
    "arena_people_msgs/srv/DeletePedestrians":
        "c66bcd365d138fde9aac0bb2506982008ff56e777a135dade45dbec34bebb973",
    "arena_people_msgs/srv/MovePedestrians":
        "e6fbf815b34d18bce59752ea18b9ed298e006293042d42086ce6ff78d288d7e8",
    "arena_people_msgs/srv/SpawnPedestrians":
        "29bc4426925536dcfa3e319b4b32985b72f6813626dc5fb80fde8e0b279e943e",
    "arena_people_msgs/srv/UpdatePedestrians":
        "3c025f8685c956fd1b81246fcbc5a1d952773896d2dea271d0d349420c86cac6",
    "viewport_control_msgs/msg/ViewportView":
        "7adb7001b0f3f40dd217429a8380d853ccee43d27e0afa49e5951f7de8a428e2",
    "viewport_control_msgs/srv/ViewportCapture":
        "176baebe5c107c09db075ed2294222e87ff862303ceaf564ab97731bf7dcf961",
    "viewport_control_msgs/srv/ViewportSetProjection":
        "4ec5acc54fa7e5453af65d39bca4247947f49ec935b6a09f40a385435059854c",
    "viewport_control_msgs/srv/ViewportSetReferenceFrame":
        "f77ed044e557cc2084dd2b1b288f4b21d78684c35eaeed9dab0cf9ce9d164fb8",
    "viewport_control_msgs/srv/ViewportSetView":
        "0a3e80d4ae9d5b705ac18c2913461af1c9710311ee495db0fe2f681fc8d7cd7b",
}
# the seed's newer interface: Prim with visuals, the light contract
SEED = {
    "arena_mujoco_msgs/msg/Light":
        "2ecb32b04cb9b20352f8b52ac5132726a0ab5460dc64529d0d79bc70096d0d77",
    "arena_mujoco_msgs/msg/LightState":
        "3dfbd4cd299dd2b010f63400c65651b57682beea64e37a851da869b68c0cbdbc",
    "arena_mujoco_msgs/msg/Prim":
        "f14e6ddd4b04e37d1daa0ca26708a148862012469f78f459dd4d19a709faee6d",
    "arena_mujoco_msgs/msg/Visual":
        "6efdb20436a2c50d6a8cdedf9ed628823b0ac25d8c4a0cc8892f9e290b45dbea",
    "arena_mujoco_msgs/srv/EditPrims":
        "ad33ed1ed40c2f37de8a96b5bd1c1a5fa5962905efca7f10e826edb6cf953de0",
    "arena_mujoco_msgs/srv/SetLights":
        "e0d5690afc9ad619c79542a8f42d8be80342c9542a78e4ebb45c07d37a9ed154",
    "arena_mujoco_msgs/srv/SpawnLights":
        "9a5d1db8cebd9330bf87ae6580ec5987d4a13f0ed91f6b537ac7ab1309ff81d3",
    "arena_mujoco_msgs/srv/SpawnPrims":
        "0269c73cf63f08879bb1b86191435801db4ef45746f44ae4e42d0517e9470c18",
}


@pytest.mark.parametrize("name", sorted(KEPT | SEED))
def test_each_types_hash_is_the_pinned_one(ros_venv, name):
    description = json.loads((ros_venv / "share" / f"{name}.json").read_text())
    own = description["type_hashes"][0]
    assert own["type_name"] == name
    assert own["hash_string"] == "RIHS01_" + (KEPT | SEED)[name]


def test_every_interface_type_is_pinned(ros_venv):
    from arena_gym.ros.setup_venv import INTERFACES

    files = {f"{p.parent.parent.name}/{p.parent.name}/{p.stem}"
             for folder in ("arena_mujoco_msgs", "arena_people_msgs", "viewport_control_msgs")
             for p in (INTERFACES / folder).glob("*/*.*") if p.suffix in (".msg", ".srv")}
    assert files == set(KEPT) | set(SEED)
